// The application's host functions as tokens (host_functions.cpp): what cudaLaunchHostFunc,
// cudaStreamAddCallback and graph host nodes send in a function's place, its callback registered
// with the process's session (frontend/host_callbacks.h) and the session's callback thread
// serving the calling thread's route.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gvirtus::cudart {

// Registers `fn(data)` and makes sure the session serves its gates: cudaSuccess with the token,
// or the failure (recorded as the last error).
cudaError_t host_function_token(cudaHostFn_t fn, void* data, uint64_t& token);
// The host function a token names, if the process still knows it.
bool host_function_of(uint64_t token, cudaHostFn_t& fn, void*& data);
// Forgets a token whose node or enqueue failed.
void drop_host_function(uint64_t token);

}  // namespace gvirtus::cudart

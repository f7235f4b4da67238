// The application's host functions as tokens (host_functions.cpp): what cudaLaunchHostFunc,
// cudaStreamAddCallback and graph host nodes send in a function's place, its callback registered
// with the process's session (frontend/host_callbacks.h) and the session's callback thread
// serving the calling thread's route.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "frontend/frontend_abi.h"

namespace gvirtus::cudart {

// Registers `fn(data)` and makes sure the session serves its gates: cudaSuccess with the token,
// or the failure (recorded as the last error).
cudaError_t host_function_token(cudaHostFn_t fn, void* data, uint64_t& token);
// The host function a token names, if the process still knows it.
bool host_function_of(uint64_t token, cudaHostFn_t& fn, void*& data);
// Forgets a token whose node or enqueue failed.
void drop_host_function(uint64_t token);
// Registers any callback of the stub's (a log callback's trampoline) as host_function_token does.
cudaError_t host_callback_token(const gvirtus_host_callback& callback, uint64_t& token);

}  // namespace gvirtus::cudart

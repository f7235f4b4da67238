// The application's host functions as tokens (host_functions.cpp): what cuLaunchHostFunc,
// cuStreamAddCallback and graph host nodes send in a function's place, its callback registered
// with the process's session (frontend/host_callbacks.h) and the session's callback thread
// serving the backend the calling thread's route names.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "frontend/frontend_abi.h"

namespace gvirtus::cuda {

// Registers `fn(data)` and makes sure the route's session serves its gates: CUDA_SUCCESS with
// the token, or the failure (the session is lost or refused).
CUresult host_function_token(CUhostFn fn, void* data, uint64_t& token);
// The host function a token names, if the process still knows it.
bool host_function_of(uint64_t token, CUhostFn& fn, void*& data);
// Forgets a token whose enqueue failed.
void drop_host_function(uint64_t token);
// Registers any callback of the stub's (a log callback's trampoline) as host_function_token does.
CUresult host_callback_token(const gvirtus_host_callback& callback, uint64_t& token);

}  // namespace gvirtus::cuda

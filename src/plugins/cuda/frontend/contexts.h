// Contexts as the client libcuda.so.1 keeps them: each thread's context stack (cuCtxGetCurrent
// and its kin are answered here, without the backend), the device of every context the stub was
// given, and the primary context of each device. The backend's executor for a thread follows
// the thread's current context (every change is sent as cuCtxSetCurrent).
//
// Thread-safe: the stack is per thread, the maps are locked.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

// The calling thread's current context (null when none).
CUcontext current_context();

// The primary context of `device`, retained once for the process the first time it is asked for
// (the runtime's private interface hands it out without retaining it: export_tables.cpp).
CUresult primary_context(CUdevice device, CUcontext* context);

}  // namespace gvirtus::cuda

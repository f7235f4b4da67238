// cuGetExportTable in the client libcuda.so.1: the driver's private tables that NVIDIA's runtimes
// (static and shared, CUDA 12 and 13) and libraries ask for by UUID, answered by the stub.
//
// The facts of their layouts and meanings come from public reverse engineering (ZLUDA's
// dark_api; docs/driver.md lists what each slot does here). A table is an array of pointers; most
// start with their own size in bytes. Slots whose meaning is not known hold a function that logs,
// once, which table and slot was called and returns CUDA_ERROR_NOT_SUPPORTED. A UUID the stub
// does not know is logged once with the library that asked, and refused with
// CUDA_ERROR_NOT_FOUND, which the runtime takes for an optional table.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

// The primary contexts' context-local storage (CONTEXT_LOCAL_STORAGE_INTERFACE): runs and drops
// the destructors registered for `context`, as a primary context reset does.
void destroy_context_storage(CUcontext context);

}  // namespace gvirtus::cuda

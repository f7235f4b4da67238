// Managed variables in the client libcuda.so.1 (frontend/managed_variables.h has the design): the
// variable a library's cuLibraryGetManaged names is mirrored at its address, so that the program -
// NVIDIA's runtime hands it the address as the variable's - reads and writes it here, coherent
// with the backend's copy at the points the managed mirror keeps.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace gvirtus::cuda {

// Mirrors the managed variable [address, address + bytes) of `library`: CUDA_SUCCESS, or
// CUDA_ERROR_OUT_OF_MEMORY (logged as a warning with the reason) when its pages cannot be
// mirrored here.
CUresult mirror_managed_variable(const void* library, CUdeviceptr address, size_t bytes);
// Forgets the variables of `library` (unloaded).
void forget_managed_variables(const void* library);

}  // namespace gvirtus::cuda

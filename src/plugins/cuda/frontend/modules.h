// Module loading in the client libcuda.so.1: an image in the application's memory is sent to the
// backend, which loads it on its driver (cuModuleLoadData on the wire: common/driver_wire.h).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <span>
#include <vector>

namespace gvirtus::cuda {

// Loads the image's bytes as a module of the backend; `module` receives its handle.
CUresult load_module(std::span<const std::byte> image, CUmodule* module);

// Loads the image's bytes as a library of the backend (no options); `library` receives its
// handle.
CUresult load_library(std::span<const std::byte> image, CUlibrary* library);

// A file on the client's machine (cuModuleLoad, cuLibraryLoadFromFile, cuLinkAddFile), read
// whole, with a NUL after its bytes (PTX text ends there): CUDA_ERROR_FILE_NOT_FOUND when it
// cannot be read, CUDA_ERROR_INVALID_IMAGE when it is larger than any image.
CUresult read_module_file(const char* path, std::vector<char>& bytes);

// What launches learnt of functions (launch.cpp: parameter layouts, dynamic shared memory
// limits), forgotten when modules go - an unload, a primary context's reset - since the backend's
// driver may give a new function a freed one's handle.
void forget_launch_facts();
// Library kernels the stub handed out (cuLibraryGetKernel, cuLibraryEnumerateKernels), with the
// library the application knows them by; forgotten with it when it is unloaded (launch.cpp).
void note_kernels(CUlibrary library, std::span<const CUkernel> handed_out);
void forget_library_kernels(CUlibrary library);

}  // namespace gvirtus::cuda

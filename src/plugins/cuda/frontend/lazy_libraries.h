// Libraries loaded when first used (issue 20: "upload it when a module or kernel is first used,
// not when it is registered, the way CUDA's lazy loading does").
//
// NVIDIA's runtime loads every fatbinary of a program as a library when it starts - cuBLAS's
// static runtime 2,980 of them - and asks for a kernel of a handful (6 for one sgemm), unloading
// the rest at exit. So cuLibraryLoadData without JIT options (whose log buffers must be filled
// by the call itself) does not go to the backend: the stub keeps the image and answers a handle
// of its own, and loads the library (modules.h: cut down, named by hash, sent if need be) the
// first time a call needs the backend's: a kernel, a module, a global, a count or an enumeration.
// A library never used is unloaded without a round trip.
//
// The stub's handles are values no user-space pointer takes (the top 12 bits set), so they never
// meet a backend's. The image is kept as the application gave it when it said the binary is
// preserved (CU_LIBRARY_BINARY_IS_PRESERVED), else copied, as the driver copies it.
//
// What differs from an eager load: an image that is a fatbinary by its headers but that the
// driver would refuse (no code for the device, a damaged entry) is reported by the first call
// that needs the library, not by cuLibraryLoadData - as CUDA's own lazy loading reports a
// kernel's failure to load when it is first used.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <span>
#include <vector>

namespace gvirtus::cuda {

// A handle for the library whose image is `image` (copied unless `preserved`).
CUlibrary defer_library(std::span<const std::byte> image, bool preserved);

// The backend's handle for `library`, loading a deferred library first (its error if it does not
// load). Handles the stub did not defer are the backend's already and pass as they are.
CUresult backend_library(CUlibrary library, CUlibrary* backend);

// Forgets `library` if the stub deferred it; whether it had (then `loaded` says whether the
// backend has it to unload too, as `backend`).
bool forget_deferred_library(CUlibrary library, bool& loaded, CUlibrary& backend);

}  // namespace gvirtus::cuda

// Modules' and libraries' global variables in the client libcuda.so.1: device memory the driver
// placed, which the stub must know as such (cuMemcpy tells device from host pointers by what it
// knows: memory_ranges.h) until its module or library unloads. The size is asked for even when
// the caller does not want it, to know the range.
#include <map>
#include <mutex>
#include <vector>

#include "cuda_remote_calls.h"
#include "plugins/cuda/frontend/context_answers.h"
#include "plugins/cuda/frontend/lazy_libraries.h"
#include "plugins/cuda/frontend/managed_variables.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/modules.h"

namespace gvirtus::cuda {
namespace {

std::mutex& mutex = *new std::mutex;  // never destroyed: unloads come from exit handlers too
auto& placed = *new std::map<const void*, std::vector<CUdeviceptr>>;  // by module or library

template <typename Owner, typename Ask>
CUresult get_global(CUdeviceptr* dptr, size_t* bytes, Owner owner, Ask ask) {
  CUdeviceptr address = 0;
  size_t size = 0;
  const CUresult result = ask(&address, &size);
  if (result != CUDA_SUCCESS) return result;
  device_ranges().add(as_pointer(address), size, 0);
  {
    std::lock_guard lock(mutex);
    placed[owner].push_back(address);
  }
  if (dptr != nullptr) *dptr = address;
  if (bytes != nullptr) *bytes = size;
  return CUDA_SUCCESS;
}

void forget(const void* owner) {
  std::lock_guard lock(mutex);
  const auto it = placed.find(owner);
  if (it == placed.end()) return;
  for (CUdeviceptr address : it->second) device_ranges().remove(as_pointer(address));
  placed.erase(it);
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr,
                                                                                size_t* bytes,
                                                                                CUmodule hmod,
                                                                                const char* name) {
  return cr::get_global(dptr, bytes, hmod, [&](CUdeviceptr* a, size_t* b) {
    return cr::remote::cuModuleGetGlobal_v2(a, b, hmod, name);
  });
}

extern "C" __attribute__((visibility("default"))) CUresult cuLibraryGetGlobal(CUdeviceptr* dptr,
                                                                              size_t* bytes,
                                                                              CUlibrary library,
                                                                              const char* name) {
  CUlibrary backend = nullptr;
  if (const CUresult r = cr::backend_library(library, &backend); r != CUDA_SUCCESS) return r;
  return cr::get_global(dptr, bytes, library, [&](CUdeviceptr* a, size_t* b) {
    return cr::remote::cuLibraryGetGlobal(a, b, backend, name);
  });
}

extern "C" __attribute__((visibility("default"))) CUresult cuLibraryGetManaged(CUdeviceptr* dptr,
                                                                               size_t* bytes,
                                                                               CUlibrary library,
                                                                               const char* name) {
  CUlibrary backend = nullptr;
  if (const CUresult r = cr::backend_library(library, &backend); r != CUDA_SUCCESS) return r;
  CUdeviceptr address = 0;
  size_t size = 0;
  const CUresult result = cr::get_global(&address, &size, library, [&](CUdeviceptr* a, size_t* b) {
    return cr::remote::cuLibraryGetManaged(a, b, backend, name);
  });
  if (result != CUDA_SUCCESS) return result;
  // The program reads and writes it here, at its address (NVIDIA's runtime hands it out as the
  // variable's): mirrored as managed memory. NVIDIA's runtime asks for every managed variable of
  // a module when it loads it, used or not: one whose pages cannot be mirrored here is answered
  // all the same (the log says why), as a program that never touches it on the host loses
  // nothing, and one that does faults there.
  (void)cr::mirror_managed_variable(library, address, size);
  if (dptr != nullptr) *dptr = address;
  if (bytes != nullptr) *bytes = size;
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuModuleUnload(CUmodule hmod) {
  const CUresult result = cr::remote::cuModuleUnload(hmod);
  if (result == CUDA_SUCCESS) {
    cr::forget(hmod);
    cr::forget_launch_facts();
    cr::forget_context_answers();
  }
  return result;
}

// A library the stub deferred and never loaded goes without a round trip (lazy_libraries.h).
extern "C" __attribute__((visibility("default"))) CUresult cuLibraryUnload(CUlibrary library) {
  bool loaded = true;
  CUlibrary backend = library;
  if (cr::forget_deferred_library(library, loaded, backend) && !loaded) return CUDA_SUCCESS;
  const CUresult result = cr::remote::cuLibraryUnload(backend);
  if (result == CUDA_SUCCESS) {
    cr::forget(library);
    cr::forget_managed_variables(library);
    cr::forget_library_kernels(library);
    cr::forget_launch_facts();
    cr::forget_context_answers();
  }
  return result;
}

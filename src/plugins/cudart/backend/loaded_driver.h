// A function of the CUDA driver that NVIDIA's runtime loaded into this backend process, for the
// few answers the runtime API cannot give (an allocation's extent, a kernel node's kernel when the
// node names a library's kernel, an imported allocation's size). Never loads a second driver: null
// when none is loaded or it lacks the function.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>

namespace gvirtus::cudart {

template <class Function>
Function loaded_driver_function(const char* name) {
  void* const driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  if (driver == nullptr) return nullptr;
  Function function = reinterpret_cast<Function>(::dlsym(driver, name));
  ::dlclose(driver);  // the runtime's own reference keeps it loaded
  return function;
}

// The bytes of the allocation starting at `base`, by the loaded driver's account
// (cuMemGetAddressRange: the runtime has no such query); 0 when it cannot say, or `base` is not
// where an allocation starts.
inline uint64_t loaded_allocation_bytes(const void* base) {
  using GetAddressRange = int (*)(unsigned long long*, size_t*, unsigned long long);
  static const auto range = loaded_driver_function<GetAddressRange>("cuMemGetAddressRange_v2");
  unsigned long long start = 0;
  size_t bytes = 0;
  const auto address = static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(base));
  if (range == nullptr || range(&start, &bytes, address) != 0 || start != address) return 0;
  return bytes;
}

}  // namespace gvirtus::cudart

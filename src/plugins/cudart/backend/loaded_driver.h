// A function of the CUDA driver that NVIDIA's runtime loaded into this backend process, for the
// few answers the runtime API cannot give (an allocation's extent, a kernel node's kernel when the
// node names a library's kernel). Never loads a second driver: null when none is loaded or it
// lacks the function.
#pragma once

#include <dlfcn.h>

namespace gvirtus::cudart {

template <class Function>
Function loaded_driver_function(const char* name) {
  void* const driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  if (driver == nullptr) return nullptr;
  Function function = reinterpret_cast<Function>(::dlsym(driver, name));
  ::dlclose(driver);  // the runtime's own reference keeps it loaded
  return function;
}

}  // namespace gvirtus::cudart

// Libraries and kernels of the simulated device (CUDA 12's context-independent loading): a
// library is a module of ours, cuLibraryGetModule gives it, and a kernel is a handle of its own
// onto the function it names (state.h), which launches like the function.
#include "state.h"

namespace sim = gvirtus::simulated;

GVIRTUS_SIMULATED_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image,
                                                     unsigned int numOptions, CUjit_option* options,
                                                     void** optionValues) {
  // JIT options steer a compiler the simulated device does not run: checked, then unused.
  if (numOptions != 0 && (options == nullptr || optionValues == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return cuModuleLoadData(module, image);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLibraryLoadData(
    CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitOptionsValues,
    unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
    unsigned int numLibraryOptions) {
  if (numLibraryOptions != 0 && (libraryOptions == nullptr || libraryOptionValues == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUmodule module = nullptr;
  const CUresult result =
      cuModuleLoadDataEx(&module, code, numJitOptions, jitOptions, jitOptionsValues);
  if (result != CUDA_SUCCESS) return result;
  sim::guarded([&](sim::State& s) {
    s.modules.at(module)->library = true;
    return CUDA_SUCCESS;
  });
  if (library != nullptr) *library = reinterpret_cast<CUlibrary>(module);
  return result;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLibraryUnload(CUlibrary library) {
  return cuModuleUnload(reinterpret_cast<CUmodule>(library));
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  return sim::guarded([&](sim::State& s) {
    if (pMod == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto module = reinterpret_cast<CUmodule>(library);
    if (s.modules.count(module) == 0) return CUDA_ERROR_INVALID_HANDLE;
    *pMod = module;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library,
                                                     const char* name) {
  CUfunction function = nullptr;
  const CUresult result = cuModuleGetFunction(&function, reinterpret_cast<CUmodule>(library), name);
  if (result == CUDA_SUCCESS && pKernel != nullptr) *pKernel = sim::kernel_of(function);
  return result;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib) {
  return sim::guarded([&](sim::State& s) {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto module = s.modules.find(reinterpret_cast<CUmodule>(lib));
    if (module == s.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned>(module->second->kernels.size());
    return CUDA_SUCCESS;
  });
}

namespace {

// The function of a kernel handle, as a CUfunction (null when the kernel is unknown).
CUfunction function_of(CUkernel kernel) {
  CUfunction function = nullptr;
  sim::guarded([&](sim::State& s) {
    // A kernel handle, not a function's own.
    if (const auto found = s.function_by_kernel.find(kernel); found != s.function_by_kernel.end()) {
      function = found->second;
    }
    return CUDA_SUCCESS;
  });
  return function;
}

// CUDA_SUCCESS for a visible device's ordinal, else the error (CUDA_ERROR_INVALID_DEVICE).
CUresult check_device(CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    return sim::valid_device(s, dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  if (pFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUfunction function = function_of(kernel);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *pFunc = function;
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
                                                       size_t* paramOffset, size_t* paramSize) {
  const CUfunction function = function_of(kernel);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return cuFuncGetParamInfo(function, paramIndex, paramOffset, paramSize);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib,
                                                       CUkernel kernel, CUdevice dev) {
  if (const CUresult r = check_device(dev); r != CUDA_SUCCESS) return r;
  const CUfunction function = function_of(kernel);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return cuFuncGetAttribute(pi, attrib, function);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                                                       CUkernel kernel, CUdevice dev) {
  if (const CUresult r = check_device(dev); r != CUDA_SUCCESS) return r;
  const CUfunction function = function_of(kernel);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return cuFuncSetAttribute(function, attrib, val);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config,
                                                         CUdevice dev) {
  if (const CUresult r = check_device(dev); r != CUDA_SUCCESS) return r;
  const CUfunction function = function_of(kernel);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return cuFuncSetCacheConfig(function, config);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes,
                                                     CUlibrary library, const char* name) {
  return cuModuleGetGlobal_v2(dptr, bytes, reinterpret_cast<CUmodule>(library), name);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes,
                                                      CUlibrary library, const char* name) {
  return sim::guarded([&](sim::State& s) {
    return sim::managed_variable(s, reinterpret_cast<CUmodule>(library), name, dptr, bytes);
  });
}

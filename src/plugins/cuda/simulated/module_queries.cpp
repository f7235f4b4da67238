// A module's functions and a library's kernels enumerated, function and kernel names, a
// function's module and loading state, on the simulated device: from the kernels its parser
// found, in their order in the image. Every function is loaded (nothing is lazy here).
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

// Fills up to `count` handles of the module's kernels, each made by `handle_of`.
template <typename Handle, typename HandleOf>
CUresult enumerate(Handle* handles, unsigned count, CUmodule hmod, HandleOf handle_of) {
  return sim::guarded([&](sim::State& s) {
    if (handles == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
    const auto module = s.modules.find(hmod);
    if (module == s.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
    unsigned i = 0;
    for (const auto& kernel : module->second->kernels) {
      if (i == count) break;
      handles[i++] = handle_of(sim::function_handle(s, hmod, kernel));
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) {
  return sim::guarded([&](sim::State& s) {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto module = s.modules.find(mod);
    if (module == s.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned>(module->second->kernels.size());
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuModuleEnumerateFunctions(CUfunction* functions,
                                                             unsigned int numFunctions,
                                                             CUmodule mod) {
  return enumerate(functions, numFunctions, mod, [](CUfunction f) { return f; });
}

// A library is a module of ours (libraries.cpp).
GVIRTUS_SIMULATED_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel* kernels,
                                                            unsigned int numKernels,
                                                            CUlibrary lib) {
  return enumerate(kernels, numKernels, reinterpret_cast<CUmodule>(lib), sim::kernel_of);
}

// The name of a function or of a kernel (both name one Function).
GVIRTUS_SIMULATED_EXPORT CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
  return sim::guarded([&](sim::State& s) {
    if (name == nullptr || hfunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const sim::Function* function = sim::function_of(s, hfunc);
    if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *name = function->layout->name.c_str();
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuKernelGetName(const char** name, CUkernel hfunc) {
  return cuFuncGetName(name, reinterpret_cast<CUfunction>(hfunc));
}

GVIRTUS_SIMULATED_EXPORT CUresult cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  return sim::guarded([&](sim::State& s) {
    if (hmod == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto function = s.functions.find(hfunc);
    if (function == s.functions.end()) return CUDA_ERROR_INVALID_HANDLE;
    *hmod = function->second->module;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuFuncIsLoaded(CUfunctionLoadingState* state,
                                                 CUfunction function) {
  return sim::guarded([&](sim::State& s) {
    if (state == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (s.functions.count(function) == 0) return CUDA_ERROR_INVALID_HANDLE;
    *state = CU_FUNCTION_LOADING_STATE_LOADED;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuFuncLoad(CUfunction function) {
  return sim::guarded([&](sim::State& s) {
    return s.functions.count(function) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

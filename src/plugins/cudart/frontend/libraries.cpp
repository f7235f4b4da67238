// Libraries the program loads itself: cudaLibraryLoadData and cudaLibraryLoadFromFile, the
// library's kernels (cudaLibraryGetKernel, cudaLibraryGetKernelCount,
// cudaLibraryEnumerateKernels) and globals (cudaLibraryGetGlobal), cudaLibraryUnload, and
// cudaKernelSetAttributeForDevice. The image - a fatbinary, a cubin or PTX, its size found from
// its own headers (plugins/cuda/common/module_image.h) - is copied and loaded into the session at
// once, as a registered module is when first used (registry.h); its kernels' parameter layouts
// are read from it, so a library kernel's handle launches as cudaGetKernel's handles do
// (cudaLaunchKernel, cudaLaunchKernelExC, graph kernel nodes).
//
// A library's managed variables (cudaLibraryGetManaged) are mirrored here (managed_variables.h).
//
// JIT options travel with the load (cuda/common/jit_options.h), their outputs (logs, sizes, wall
// time) written back; those naming other host memory are refused, as the driver stub refuses
// them. Not remoted: the library's host function table (cudaLibraryGetUnifiedFunction,
// cudaLibraryHostUniversalFunctionAndDataTable): unsupported_reasons.txt says why.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/log.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/jit_options.h"
#include "plugins/cuda/common/module_image.h"
#include "plugins/cudart/frontend/managed_variables.h"
#include "plugins/cudart/frontend/registry.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

// The runtime's initialisation failure, recorded, or cudaSuccess: natively every library call
// initialises the runtime before it looks at its arguments.
cudaError_t init_failure() {
  const cudaError_t init = cr::runtime_init_status();
  return init != cudaSuccess ? cr::record_local_error(init) : cudaSuccess;
}

cudaError_t not_supported(const char* call, const char* why) {
  if (const cudaError_t init = init_failure(); init != cudaSuccess) return init;
  GVIRTUS_LOG(kWarning) << call << ": " << why;
  return cr::record_local_error(cudaErrorNotSupported);
}

// Of the library's options, the stub honours cudaLibraryBinaryIsPreserved only (it keeps its own
// copy of the image anyway): the host function table lives in the backend's process.
bool library_options_supported(const cudaLibraryOption* library_options,
                               unsigned int library_option_count) {
  for (unsigned int i = 0; i < library_option_count; ++i) {
    if (library_options == nullptr || library_options[i] != cudaLibraryBinaryIsPreserved) {
      return false;
    }
  }
  return true;
}

// The JIT options travel with the load (cuda/common/jit_options.h; the runtime's values are the
// driver's): those naming host memory other than logs are refused, as the driver stub refuses
// them. cudaSuccess, or the error to answer.
cudaError_t check_jit(const cudaJitOption* options, void** values, unsigned int count,
                      const char* call) {
  switch (gvirtus::cuda::check_jit_options(reinterpret_cast<const CUjit_option*>(options), values,
                                           count)) {
    case CUDA_SUCCESS:
      return cudaSuccess;
    case CUDA_ERROR_NOT_SUPPORTED:
      return not_supported(call,
                           "a JIT option that names the program's memory (other than its "
                           "logs) cannot reach the backend");
    default:
      return cr::refuse_locally(cudaErrorInvalidValue);
  }
}

cudaError_t load(cudaLibrary_t* library, std::vector<std::byte> image, const cr::JitRequest& jit) {
  cudaError_t result = cudaSuccess;
  cr::Module* module = cr::load_library(std::move(image), result, jit);
  if (module == nullptr) return result;
  *library = reinterpret_cast<cudaLibrary_t>(module);
  return cudaSuccess;
}

// The library `handle` names, or null with the runtime's error recorded.
cr::Module* library_of(cudaLibrary_t handle, cudaError_t& error) {
  if ((error = init_failure()) != cudaSuccess) return nullptr;
  cr::Module* module = cr::find_library(handle);
  if (module == nullptr) error = cr::record_local_error(cudaErrorInvalidResourceHandle);
  return module;
}

// The library `handle` names and its kernels' names, or the error.
cudaError_t kernel_names(cudaLibrary_t handle, cr::Module*& module,
                         std::vector<std::string>& names) {
  cudaError_t error = cudaSuccess;
  module = library_of(handle, error);
  if (module == nullptr) return error;
  return cr::library_kernel_names(*module, names);
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaLibraryLoadData(
    cudaLibrary_t* library, const void* code, cudaJitOption* jitOptions, void** jitOptionsValues,
    unsigned int numJitOptions, cudaLibraryOption* libraryOptions, void** libraryOptionValues,
    unsigned int numLibraryOptions) {
  if (library == nullptr || code == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  if (!library_options_supported(libraryOptions, numLibraryOptions)) {
    return not_supported("cudaLibraryLoadData",
                         "library options other than "
                         "cudaLibraryBinaryIsPreserved are not remoted");
  }
  if (const cudaError_t init = init_failure(); init != cudaSuccess) return init;
  if (const cudaError_t rc =
          check_jit(jitOptions, jitOptionsValues, numJitOptions, "cudaLibraryLoadData");
      rc != cudaSuccess) {
    return rc;
  }
  const size_t bytes = gvirtus::cuda::module_image_size(code, gvirtus::cuda::kMaxModuleImageBytes);
  if (bytes == 0) return cr::record_local_error(cudaErrorInvalidKernelImage);
  const auto* begin = static_cast<const std::byte*>(code);
  return load(library, std::vector<std::byte>(begin, begin + bytes),
              {jitOptions, jitOptionsValues, numJitOptions});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLibraryLoadFromFile(
    cudaLibrary_t* library, const char* fileName, cudaJitOption* jitOptions,
    void** jitOptionsValues, unsigned int numJitOptions, cudaLibraryOption* libraryOptions,
    void** libraryOptionValues, unsigned int numLibraryOptions) {
  if (library == nullptr || fileName == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  if (!library_options_supported(libraryOptions, numLibraryOptions)) {
    return not_supported("cudaLibraryLoadFromFile",
                         "library options other than "
                         "cudaLibraryBinaryIsPreserved are not remoted");
  }
  if (const cudaError_t init = init_failure(); init != cudaSuccess) return init;
  if (const cudaError_t rc =
          check_jit(jitOptions, jitOptionsValues, numJitOptions, "cudaLibraryLoadFromFile");
      rc != cudaSuccess) {
    return rc;
  }
  std::ifstream in(fileName, std::ios::binary | std::ios::ate);
  if (!in) return cr::record_local_error(cudaErrorFileNotFound);
  const std::streamoff size = in.tellg();
  if (size <= 0 || static_cast<uint64_t>(size) > gvirtus::cuda::kMaxModuleImageBytes) {
    return cr::record_local_error(cudaErrorInvalidKernelImage);
  }
  std::vector<std::byte> image(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(image.data()), size)) {
    return cr::record_local_error(cudaErrorFileNotFound);
  }
  // The image as its headers describe it (PTX gets the NUL a file need not end with).
  if (gvirtus::cuda::module_image_kind(image.data(), image.size()) ==
      gvirtus::cuda::ModuleImageKind::kPtx) {
    if (image.back() != std::byte{0}) image.push_back(std::byte{0});
  }
  const size_t bytes = gvirtus::cuda::module_image_size(image.data(), image.size());
  if (bytes == 0) return cr::record_local_error(cudaErrorInvalidKernelImage);
  image.resize(bytes);
  return load(library, std::move(image), {jitOptions, jitOptionsValues, numJitOptions});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library) {
  cudaError_t error = cudaSuccess;
  cr::Module* module = library_of(library, error);
  if (module == nullptr) return error;
  const cudaError_t result = cr::unload_library(*module);
  if (result == cudaSuccess) cr::forget_managed_variables(*module);
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLibraryGetKernel(cudaKernel_t* pKernel, cudaLibrary_t library,
                                                       const char* name) {
  if (pKernel == nullptr || name == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  cudaError_t error = cudaSuccess;
  cr::Module* module = library_of(library, error);
  if (module == nullptr) return error;
  cr::Kernel* kernel = nullptr;
  if (const cudaError_t rc = cr::library_kernel(*module, name, kernel); rc != cudaSuccess) {
    return rc;
  }
  *pKernel = reinterpret_cast<cudaKernel_t>(kernel);
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLibraryGetKernelCount(unsigned int* count,
                                                            cudaLibrary_t lib) {
  if (count == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  cr::Module* module = nullptr;
  std::vector<std::string> names;
  if (const cudaError_t rc = kernel_names(lib, module, names); rc != cudaSuccess) return rc;
  *count = static_cast<unsigned int>(names.size());
  return cudaSuccess;
}

// As many kernels as the array holds, in the order of the library's names (sorted).
GVIRTUS_CUDART_EXPORT cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t* kernels,
                                                              unsigned int numKernels,
                                                              cudaLibrary_t lib) {
  if (kernels == nullptr && numKernels > 0) return cr::refuse_locally(cudaErrorInvalidValue);
  cr::Module* module = nullptr;
  std::vector<std::string> names;
  if (const cudaError_t rc = kernel_names(lib, module, names); rc != cudaSuccess) return rc;
  for (unsigned int i = 0; i < numKernels && i < names.size(); ++i) {
    cr::Kernel* kernel = nullptr;
    if (const cudaError_t rc = cr::library_kernel(*module, names[i].c_str(), kernel);
        rc != cudaSuccess) {
      return rc;
    }
    kernels[i] = reinterpret_cast<cudaKernel_t>(kernel);
  }
  return cudaSuccess;
}

namespace {

// cudaLibraryGetGlobal (`managed` false) and cudaLibraryGetManaged: the variable resolved in the
// session; a managed one is mirrored here at its address (managed_variables.h), so that the
// program reads and writes it through `dptr`.
cudaError_t library_global(void** dptr, size_t* bytes, cudaLibrary_t library, const char* name,
                           bool managed) {
  if (name == nullptr || (dptr == nullptr && bytes == nullptr)) {
    return cr::refuse_locally(cudaErrorInvalidValue);
  }
  cudaError_t error = cudaSuccess;
  cr::Module* module = library_of(library, error);
  if (module == nullptr) return error;
  cr::Variable* variable = nullptr;
  if (const cudaError_t rc = cr::library_variable(*module, name, variable, managed);
      rc != cudaSuccess) {
    return rc;
  }
  if (managed) {
    if (const cudaError_t rc = cr::mirror_managed_variable(*module, *variable); rc != cudaSuccess) {
      return cr::record_local_error(rc);
    }
  }
  if (dptr != nullptr) *dptr = reinterpret_cast<void*>(static_cast<uintptr_t>(variable->address));
  if (bytes != nullptr) *bytes = variable->bytes;
  return cudaSuccess;
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaLibraryGetGlobal(void** dptr, size_t* bytes,
                                                       cudaLibrary_t library, const char* name) {
  return library_global(dptr, bytes, library, name, false);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLibraryGetManaged(void** dptr, size_t* bytes,
                                                        cudaLibrary_t library, const char* name) {
  return library_global(dptr, bytes, library, name, true);
}

// The attribute on `device`: set with the device current, as the runtime applies it.
GVIRTUS_CUDART_EXPORT cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel,
                                                                  cudaFuncAttribute attr, int value,
                                                                  int device) {
  int current = 0;
  if (const cudaError_t rc = cudaGetDevice(&current); rc != cudaSuccess) return rc;
  if (device != current) {
    if (const cudaError_t rc = cudaSetDevice(device); rc != cudaSuccess) return rc;
  }
  const cudaError_t result =
      cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attr, value);
  if (device != current) (void)cudaSetDevice(current);
  return result;
}

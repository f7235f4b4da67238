// cudaGetDriverEntryPoint and cudaGetDriverEntryPointByVersion (and their per-thread variants),
// answered by the stub (local_calls.txt): they return gvirtus's own driver functions, those of
// the driver stub libcuda.so.1 installed beside this library (driver/libcuda.so.1), looked up by
// its cuGetProcAddress_v2. Both stubs share the process's one gvirtus session, so a driver call
// made through such a pointer goes to the same backend session as the runtime's calls.
//
// Without the driver stub (a partial installation) every name is answered as the runtime answers
// a symbol it does not know: cudaSuccess, a null pointer and cudaDriverEntryPointSymbolNotFound.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "common/log.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

// The driver stub's cuGetProcAddress_v2, or null when it is not installed beside this library.
GetProcAddress driver_stub_lookup() {
  static const GetProcAddress lookup = []() -> GetProcAddress {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&driver_stub_lookup), &info) == 0 ||
        info.dli_fname == nullptr) {
      return nullptr;
    }
    const auto path =
        std::filesystem::path(info.dli_fname).parent_path() / "driver" / "libcuda.so.1";
    // Local: the application's own lookups of libcuda (if it loads NVIDIA's) are not disturbed.
    void* const handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      GVIRTUS_LOG(kWarning) << "cudaGetDriverEntryPoint: no gvirtus driver stub at "
                            << path.string() << " (" << ::dlerror()
                            << "); every driver symbol is not found";
      return nullptr;
    }
    return reinterpret_cast<GetProcAddress>(::dlsym(handle, "cuGetProcAddress_v2"));
  }();
  return lookup;
}

cudaError_t entry_point(const char* symbol, void** funcPtr, int version, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus) {
  if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) {
    return record_local_error(init);
  }
  if (symbol == nullptr || funcPtr == nullptr) return record_local_error(cudaErrorInvalidValue);
  // The runtime's flags are the driver's (cudaEnableDefault, LegacyStream, PerThreadDefaultStream).
  static_assert(static_cast<unsigned>(cudaEnableLegacyStream) ==
                    static_cast<unsigned>(CU_GET_PROC_ADDRESS_LEGACY_STREAM) &&
                static_cast<unsigned>(cudaEnablePerThreadDefaultStream) ==
                    static_cast<unsigned>(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  if (flags > cudaEnablePerThreadDefaultStream) return record_local_error(cudaErrorInvalidValue);
  *funcPtr = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult found = CUDA_ERROR_NOT_FOUND;
  if (const GetProcAddress lookup = driver_stub_lookup(); lookup != nullptr) {
    found = lookup(symbol, funcPtr, version, flags, &status);
  }
  if (found == CUDA_ERROR_INVALID_VALUE) return record_local_error(cudaErrorInvalidValue);
  // A name the driver lacks: the driver answers CUDA_SUCCESS with a null pointer and the status,
  // and the runtime cudaSuccess with the null pointer and the status (seen on an H200, driver
  // 580, though the runtime's documentation says cudaErrorSymbolNotFound).
  const bool resolved = found == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS;
  if (!resolved) *funcPtr = nullptr;
  if (driverStatus != nullptr) {
    *driverStatus = resolved ? cudaDriverEntryPointSuccess
                    : status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                        ? cudaDriverEntryPointVersionNotSufficent
                        : cudaDriverEntryPointSymbolNotFound;
  }
  return cudaSuccess;
}

// A per-thread build's cudaEnableDefault searches the per-thread variants too.
unsigned long long per_thread(unsigned long long flags) {
  return flags == cudaEnableDefault
             ? static_cast<unsigned long long>(cudaEnablePerThreadDefaultStream)
             : flags;
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus) {
  return cr::entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    cudaDriverEntryPointQueryResult* driverStatus) {
  return cr::entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus);
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr, unsigned long long flags,
                             cudaDriverEntryPointQueryResult* driverStatus) {
  return cr::entry_point(symbol, funcPtr, CUDART_VERSION, cr::per_thread(flags), driverStatus);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    cudaDriverEntryPointQueryResult* driverStatus) {
  return cr::entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), cr::per_thread(flags),
                         driverStatus);
}

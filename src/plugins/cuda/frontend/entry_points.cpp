// cuGetProcAddress_v2 and the older cuGetProcAddress, answered by the stub itself
// (local_calls.txt): the request names an export of this library (proc_address.h), whose
// address is looked up in this library, never in another loaded libcuda.
#include <dlfcn.h>

#include <atomic>

#include "common/log.h"
#include "plugins/cuda/frontend/proc_address.h"

namespace gvirtus::cuda {
namespace {

// This library's own handle, for dlsym: found from one of its functions' addresses.
void* own_handle() {
  static void* const handle = [] {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&resolve_proc_address), &info) == 0 ||
        info.dli_fname == nullptr) {
      return static_cast<void*>(nullptr);
    }
    return ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  }();
  return handle;
}

CUresult get_proc_address(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) noexcept {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // A version newer than the driver API this library implements, as the driver answers one
  // newer than itself.
  if (cuda_version > CUDA_VERSION) return CUDA_ERROR_INVALID_VALUE;
  // cuda.h defines flags 0, 1 and 2 only; what a driver does with others is documented nowhere.
  if (flags > CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  ProcAddress found = resolve_proc_address(symbol, cuda_version, flags);
  if (found.status == CU_GET_PROC_ADDRESS_SUCCESS) {
    void* const handle = own_handle();
    *pfn = handle != nullptr ? ::dlsym(handle, found.symbol) : nullptr;
    if (*pfn == nullptr) {
      static std::atomic<bool> logged{false};
      if (!logged.exchange(true)) {
        GVIRTUS_LOG(kError) << "libcuda.so.1 cannot find its own export " << found.symbol;
      }
      found.status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
  }
  if (status != nullptr) *status = found.status;
  // A name not found (or not in `cuda_version`): CUDA_SUCCESS with a null pointer and the status,
  // as cuda.h documents. Seen on an H200 (driver 580): NVIDIA's runtime answers an unknown name
  // with cudaSuccess natively, and with cudaErrorSymbolNotFound when this function answered
  // CUDA_ERROR_NOT_FOUND, as it did before.
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gvirtus::cuda

extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
    CUdriverProcAddressQueryResult* symbolStatus) {
  return gvirtus::cuda::get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
}

// The CUDA 11.3 entry point, without the status (cuda.h maps the name to _v2 by a macro).
#undef cuGetProcAddress
extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress(const char* symbol,
                                                                            void** pfn,
                                                                            int cudaVersion,
                                                                            cuuint64_t flags) {
  return gvirtus::cuda::get_proc_address(symbol, pfn, cudaVersion, flags, nullptr);
}

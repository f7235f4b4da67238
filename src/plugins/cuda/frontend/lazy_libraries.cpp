#include "plugins/cuda/frontend/lazy_libraries.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "cuda_remote_calls.h"
#include "plugins/cuda/frontend/modules.h"

namespace gvirtus::cuda {
namespace {

// The stub's handles: the top 12 bits set, which no user-space address of x86-64 or AArch64 has.
constexpr uintptr_t kDeferredTag = uintptr_t{0xfff} << 52;

struct Deferred {
  std::vector<std::byte> copy;       // the image when the application keeps no copy of its own
  std::span<const std::byte> image;  // the image (the application's, or `copy`)
  std::mutex loading;                // one load, however many threads need it at once
  CUlibrary backend = nullptr;       // once loaded
};

std::mutex& mutex = *new std::mutex;  // never destroyed: unloads come from exit handlers too
auto& deferred = *new std::map<uintptr_t, std::shared_ptr<Deferred>>;
std::atomic<uintptr_t> next_id{1};

bool is_deferred(CUlibrary library) {
  return (reinterpret_cast<uintptr_t>(library) & kDeferredTag) == kDeferredTag;
}

}  // namespace

CUlibrary defer_library(std::span<const std::byte> image, bool preserved) {
  auto entry = std::make_shared<Deferred>();
  if (preserved) {
    entry->image = image;
  } else {
    entry->copy.assign(image.begin(), image.end());
    entry->image = entry->copy;
  }
  const uintptr_t handle = kDeferredTag | next_id.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex);
  deferred.emplace(handle, std::move(entry));
  return reinterpret_cast<CUlibrary>(handle);
}

CUresult backend_library(CUlibrary library, CUlibrary* backend) {
  if (!is_deferred(library)) {
    *backend = library;
    return CUDA_SUCCESS;
  }
  std::shared_ptr<Deferred> entry;
  {
    std::lock_guard lock(mutex);
    const auto it = deferred.find(reinterpret_cast<uintptr_t>(library));
    if (it == deferred.end()) return CUDA_ERROR_INVALID_HANDLE;  // unloaded, or never given
    entry = it->second;
  }
  std::lock_guard loading(entry->loading);
  if (entry->backend == nullptr) {
    CUlibrary loaded = nullptr;
    const CUresult result = load_library(entry->image, &loaded);
    if (result != CUDA_SUCCESS) return result;
    entry->backend = loaded;
    entry->copy = {};  // the backend has it now; a reset that drops it is the runtime's to redo
    entry->image = {};
  }
  *backend = entry->backend;
  return CUDA_SUCCESS;
}

bool forget_deferred_library(CUlibrary library, bool& loaded, CUlibrary& backend) {
  if (!is_deferred(library)) return false;
  std::shared_ptr<Deferred> entry;
  {
    std::lock_guard lock(mutex);
    const auto it = deferred.find(reinterpret_cast<uintptr_t>(library));
    if (it == deferred.end()) return false;  // not one of the stub's: the backend judges it
    entry = std::move(it->second);
    deferred.erase(it);
  }
  std::lock_guard loading(entry->loading);
  loaded = entry->backend != nullptr;
  backend = entry->backend;
  return true;
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

// The library calls generated as remote calls, on the backend's handle of the library.
extern "C" __attribute__((visibility("default"))) CUresult cuLibraryGetModule(CUmodule* pMod,
                                                                              CUlibrary library) {
  CUlibrary backend = nullptr;
  if (const CUresult r = cr::backend_library(library, &backend); r != CUDA_SUCCESS) return r;
  return cr::remote::cuLibraryGetModule(pMod, backend);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLibraryGetKernelCount(
    unsigned int* count, CUlibrary lib) {
  CUlibrary backend = nullptr;
  if (const CUresult r = cr::backend_library(lib, &backend); r != CUDA_SUCCESS) return r;
  return cr::remote::cuLibraryGetKernelCount(count, backend);
}

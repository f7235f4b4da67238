#include "plugins/cudart/backend/vetting.h"

#include <atomic>
#include <cstdint>

#include "common/log.h"
#include "plugins/cudart/backend/shared_host_memory.h"

namespace gvirtus::cudart {
namespace {

// A client that names bad handles in a loop must not flood the daemon's log: the first few
// rejections of a session say what happened, the rest are only returned.
constexpr int kLoggedRejections = 8;
std::atomic<int> logged_rejections{0};

struct ThreadVetting {
  cudaError_t pending = cudaSuccess;  // the newest rejection the runtime does not know of
  bool rejected_this_call = false;
};
thread_local ThreadVetting this_thread;

cudaError_t reject(cudaError_t error, const char* what, const void* value) {
  this_thread.pending = error;
  this_thread.rejected_this_call = true;
  if (logged_rejections.fetch_add(1, std::memory_order_relaxed) < kLoggedRejections) {
    GVIRTUS_LOG(kWarning) << "cudart: rejected " << what << " " << value << ": "
                          << (error == cudaErrorInvalidResourceHandle
                                  ? "not a handle this session holds (never created, destroyed "
                                    "or reset)"
                                  : "not device memory of this session");
  }
  return error;
}

// The handles the runtime itself defines: null (which every runtime entry point checks for) and
// the default streams. They go to the runtime as they are.
bool runtime_defined(const void* handle) {
  return handle == nullptr || handle == cudaStreamLegacy || handle == cudaStreamPerThread;
}

cudaError_t vet_handle(HandleKind kind, const void* handle, const char* what) {
  return runtime_defined(handle) || session_handles().holds(kind, handle)
             ? cudaSuccess
             : reject(cudaErrorInvalidResourceHandle, what, handle);
}

int current_device() {
  int device = -1;
  if (::cudaGetDevice(&device) != cudaSuccess) device = -1;
  return device;
}

// Whether the runtime's description of the memory at one address lets the client name it as
// device memory.
cudaError_t vet_one_address(const void* address) {
  if (in_shared_memory(address)) return cudaSuccess;  // the client's own shared pages
  cudaPointerAttributes attributes{};
  const cudaError_t known = ::cudaPointerGetAttributes(&attributes, address);
  if (known != cudaSuccess) return known;  // the runtime's own answer (no driver, sticky error)
  const bool device_side =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  return device_side ? cudaSuccess : reject(cudaErrorInvalidValue, "device pointer", address);
}

}  // namespace

void HandleTable::adopt(HandleKind kind, const void* handle, int device) {
  std::lock_guard lock(mutex_);
  handles_[handle] = Entry{kind, device};
}

int HandleTable::release(HandleKind kind, const void* handle) {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  if (it == handles_.end() || it->second.kind != kind) return kNotHeld;
  const int device = it->second.device;
  handles_.erase(it);
  return device;
}

void HandleTable::forget_device(int device) {
  std::lock_guard lock(mutex_);
  std::erase_if(handles_, [device](const auto& item) {
    return item.second.kind == HandleKind::kMemPool || item.second.device == device;
  });
}

bool HandleTable::holds(HandleKind kind, const void* handle) const {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  return it != handles_.end() && it->second.kind == kind;
}

size_t HandleTable::size() const {
  std::lock_guard lock(mutex_);
  return handles_.size();
}

void HandleTable::clear() {
  std::lock_guard lock(mutex_);
  handles_.clear();
}

HandleTable& session_handles() {
  static HandleTable table;
  return table;
}

cudaError_t vet(cudaStream_t stream) {
  return vet_handle(HandleKind::kStream, stream, "stream");
}

cudaError_t vet(cudaEvent_t event) {
  return vet_handle(HandleKind::kEvent, event, "event");
}

cudaError_t vet(cudaMemPool_t pool) {
  return vet_handle(HandleKind::kMemPool, pool, "memory pool");
}

cudaError_t vet_device_pointer(const void* ptr, size_t bytes) {
  if (ptr == nullptr) return cudaSuccess;
  const auto first = reinterpret_cast<uintptr_t>(ptr);
  if (bytes > 1 && first > UINTPTR_MAX - (bytes - 1)) {
    return reject(cudaErrorInvalidValue, "device range wrapping around at", ptr);
  }
  const cudaError_t start = vet_one_address(ptr);
  if (start != cudaSuccess || bytes <= 1) return start;
  return vet_one_address(reinterpret_cast<const void*>(first + (bytes - 1)));
}

HandleRelease::HandleRelease(cudaStream_t stream)
    : HandleRelease(HandleKind::kStream, stream, "stream") {}

HandleRelease::HandleRelease(cudaEvent_t event)
    : HandleRelease(HandleKind::kEvent, event, "event") {}

HandleRelease::HandleRelease(HandleKind kind, const void* handle, const char* what)
    : kind_(kind),
      handle_(handle),
      device_(runtime_defined(handle) ? kNotHeld : session_handles().release(kind, handle)) {
  vetted_ = device_ != kNotHeld || runtime_defined(handle)
                ? cudaSuccess
                : reject(cudaErrorInvalidResourceHandle, what, handle);
}

HandleRelease::~HandleRelease() {
  if (device_ != kNotHeld) session_handles().adopt(kind_, handle_, device_);
}

void adopt(cudaStream_t stream) {
  session_handles().adopt(HandleKind::kStream, stream, current_device());
}

void adopt(cudaEvent_t event) {
  session_handles().adopt(HandleKind::kEvent, event, current_device());
}

void adopt(cudaMemPool_t pool) {
  session_handles().adopt(HandleKind::kMemPool, pool, current_device());
}

void begin_vetted_call() {
  this_thread.rejected_this_call = false;
}

void end_vetted_call(cudaError_t result) {
  if (result != cudaSuccess && !this_thread.rejected_this_call) this_thread.pending = cudaSuccess;
}

cudaError_t merge_last_error(cudaError_t runtime_result, bool reset) {
  const cudaError_t pending = this_thread.pending;
  if (reset) this_thread.pending = cudaSuccess;
  return pending != cudaSuccess ? pending : runtime_result;
}

}  // namespace gvirtus::cudart

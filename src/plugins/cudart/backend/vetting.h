// What the backend checks of the handles and device pointers a client names, before they reach
// NVIDIA's runtime.
//
// The runtime dereferences a stream, event or memory-pool handle as a pointer to its own
// structures: a made-up, destroyed or reset one crashes the worker, or worse, corrupts it. So the
// session (one per worker process) keeps the handles the runtime gave it - created streams and
// events, the pools it was told of - and a call naming any other handle gets
// cudaErrorInvalidResourceHandle without reaching the runtime. Null and the default streams
// (cudaStreamLegacy, cudaStreamPerThread) go to the runtime, which defines them.
//
// A pointer the client names as device memory must be memory the runtime knows as device or
// managed memory, or page-locked memory inside the session's shared arena (whose device pointer is
// its host pointer). Anything else gets cudaErrorInvalidValue, what the runtime answers for a
// device pointer it does not know. Without this, cudaMemcpyDefault would copy from or into the
// worker's own memory at any address the client names (its code, its heap, the session's secret),
// and with HMM a memset would write there.
//
// A rejected call never reaches the runtime, so the runtime's last error does not know of it: the
// rejection is kept as the executing thread's pending error, which cudaGetLastError and
// cudaPeekAtLastError report (merge_last_error) until a later call fails in the runtime itself.
//
// Thread affinity: the table is locked (a session's executors run on several threads); the
// pending error is per thread, as the runtime's last error is.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>
#include <unordered_map>

namespace gvirtus::cudart {

enum class HandleKind { kStream, kEvent, kMemPool };

// The handles a session holds, with the device each belongs to. Thread-safe.
class HandleTable {
 public:
  void adopt(HandleKind kind, const void* handle, int device);
  // Takes the handle out of the table before it is destroyed, so that a handle the runtime hands
  // out again at the same address, on another thread, is never forgotten by mistake. The device
  // it belonged to, or kNotHeld when the table does not hold it as `kind`.
  static constexpr int kNotHeld = -2;
  int release(HandleKind kind, const void* handle);
  // cudaDeviceReset of `device` destroyed its streams and events; pools are forgotten whatever
  // their device (the client asks for them again).
  void forget_device(int device);
  bool holds(HandleKind kind, const void* handle) const;
  size_t size() const;
  void clear();

 private:
  struct Entry {
    HandleKind kind;
    int device;
  };
  mutable std::mutex mutex_;
  std::unordered_map<const void*, Entry> handles_;
};

// The table of this worker's session.
HandleTable& session_handles();

// cudaSuccess when the handle may reach the runtime; otherwise the error the call returns (the
// rejection is logged and becomes the thread's pending error).
cudaError_t vet(cudaStream_t stream);
cudaError_t vet(cudaEvent_t event);
cudaError_t vet(cudaMemPool_t pool);

// cudaSuccess when [ptr, ptr + bytes) may be named as device memory by the client: null (the
// runtime judges it), device or managed memory, or registered memory in the shared arena. Both
// ends are checked. The runtime's own error when it cannot say (no driver: the call would fail
// the same way). `bytes` 0 checks the first byte only.
cudaError_t vet_device_pointer(const void* ptr, size_t bytes = 0);
inline cudaError_t vet_device_pointer(const cudaPitchedPtr& pitched) {
  return vet_device_pointer(pitched.ptr);
}

// The first failure among already computed checks, or cudaSuccess.
template <typename... Results>
cudaError_t first_failure(Results... results) {
  cudaError_t first = cudaSuccess;
  ((first = first != cudaSuccess ? first : results), ...);
  return first;
}

// A handle a call is about to destroy (a "gone" parameter): vetted() is the vetting result; taken
// out of the table now, and put back when destroyed is not confirmed (the call was rejected or
// failed, so the runtime did not free it).
class HandleRelease {
 public:
  explicit HandleRelease(cudaStream_t stream);
  explicit HandleRelease(cudaEvent_t event);
  ~HandleRelease();
  HandleRelease(const HandleRelease&) = delete;
  HandleRelease& operator=(const HandleRelease&) = delete;

  cudaError_t vetted() const { return vetted_; }
  void destroyed() { device_ = kNotHeld; }

 private:
  static constexpr int kNotHeld = HandleTable::kNotHeld;
  HandleRelease(HandleKind kind, const void* handle, const char* what);
  HandleKind kind_;
  const void* handle_;
  int device_;
  cudaError_t vetted_;
};

// After a call created handles: records them for the calling thread's current device.
void adopt(cudaStream_t stream);
void adopt(cudaEvent_t event);
void adopt(cudaMemPool_t pool);

// Per executing thread: a call is about to run (no rejection yet), and what it returned. A failure
// the runtime itself produced is newer than any pending rejection, which it therefore clears.
void begin_vetted_call();
void end_vetted_call(cudaError_t result);

// cudaGetLastError / cudaPeekAtLastError: the runtime's answer `runtime_result`, or the thread's
// pending rejection if there is one (consumed when `reset`).
cudaError_t merge_last_error(cudaError_t runtime_result, bool reset);

}  // namespace gvirtus::cudart

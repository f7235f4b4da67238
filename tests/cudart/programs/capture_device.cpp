// The capturing device: a test double preloaded into gvirtus-backend before the accepting device
// (bench/copy/accepting_device.cpp), on a machine without a GPU, so that what the stub sends
// while a stream captures can be seen on the backend (capture_test.cpp). It is never GPU
// evidence: it keeps streams and their capture state as CUDA documents them, and logs to stderr
// (the backend's log) each copy a capturing stream receives and each refusal.
//
// Streams are made-up handles; a capture is begun, ended (into a made-up graph, or invalidated),
// and invalidated by what CUDA forbids in a capture: waiting for the stream
// (cudaStreamSynchronize answers cudaErrorStreamCaptureUnsupported). Its failures are the
// thread's last error. Copies go on to the next definition (the accepting device's), after the
// log line.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <set>

namespace {

std::mutex& mutex = *new std::mutex;
auto& streams = *new std::set<cudaStream_t>;
auto& capturing = *new std::set<cudaStream_t>;
auto& invalidated = *new std::set<cudaStream_t>;
auto& graphs = *new std::set<cudaGraph_t>;
char handles[64];  // made-up handles are addresses in here
int next_handle = 0;

template <typename T>
T made_up() {
  return reinterpret_cast<T>(&handles[next_handle++ % sizeof handles]);
}

// The thread's last error, as the runtime keeps it: what this double's calls failed with.
thread_local cudaError_t last_error = cudaSuccess;

cudaError_t failed(cudaError_t error) {
  last_error = error;
  return error;
}

void log(const char* what, int value = 0) {
  std::fprintf(stderr, "capturing device: %s %d\n", what, value);
  std::fflush(stderr);
}

}  // namespace

extern "C" {

#define CAPTURE_DEVICE_EXPORT __attribute__((visibility("default")))

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  std::lock_guard lock(mutex);
  *stream = made_up<cudaStream_t>();
  streams.insert(*stream);
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  std::lock_guard lock(mutex);
  return streams.erase(stream) != 0 ? cudaSuccess : failed(cudaErrorInvalidResourceHandle);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                                         cudaStreamCaptureMode) {
  std::lock_guard lock(mutex);
  if (streams.count(stream) == 0) return failed(cudaErrorStreamCaptureUnsupported);  // null
  if (capturing.count(stream) != 0) return failed(cudaErrorIllegalState);
  capturing.insert(stream);
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  std::lock_guard lock(mutex);
  if (capturing.erase(stream) == 0) return failed(cudaErrorIllegalState);
  if (invalidated.erase(stream) != 0) {
    *graph = nullptr;
    return failed(cudaErrorStreamCaptureInvalidated);
  }
  *graph = made_up<cudaGraph_t>();
  graphs.insert(*graph);
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                                        cudaStreamCaptureStatus* status) {
  std::lock_guard lock(mutex);
  *status = capturing.count(stream) == 0     ? cudaStreamCaptureStatusNone
            : invalidated.count(stream) != 0 ? cudaStreamCaptureStatusInvalidated
                                             : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  std::lock_guard lock(mutex);
  if (capturing.count(stream) == 0) return cudaSuccess;
  if (invalidated.count(stream) != 0) {
    log("cudaStreamSynchronize of an invalidated capture");
    return failed(cudaErrorStreamCaptureInvalidated);
  }
  invalidated.insert(stream);
  log("cudaStreamSynchronize refused in a capture");
  return failed(cudaErrorStreamCaptureUnsupported);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  std::lock_guard lock(mutex);
  return graphs.erase(graph) != 0 ? cudaSuccess : failed(cudaErrorInvalidValue);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGetLastError() {
  const cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaPeekAtLastError() {
  return last_error;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                                  cudaMemcpyKind kind, cudaStream_t stream) {
  {
    std::lock_guard lock(mutex);
    if (capturing.count(stream) != 0) log("cudaMemcpyAsync captured, kind", kind);
  }
  using Copy = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
  static const auto next = reinterpret_cast<Copy>(::dlsym(RTLD_NEXT, "cudaMemcpyAsync"));
  return next(dst, src, count, kind, stream);
}

}  // extern "C"

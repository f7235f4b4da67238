// Host functions in stream order (cudaLaunchHostFunc, cudaStreamAddCallback): they are the
// application's code, so they run in the application, on the client. The stub waits for the
// stream's earlier work (a remote cudaStreamSynchronize) and runs the function before it returns,
// so the stream's later work, enqueued after this call, starts after the function has finished:
// the order CUDA guarantees, at the price of the caller waiting where the runtime would not (a
// program whose host function waits for something its own thread does after enqueueing it would
// wait forever; CUDA's rules for host functions do not forbid that, docs/cudart.md says so). The
// same as the driver stub's cuLaunchHostFunc. A capturing stream cannot be waited for: the
// capture then ends as natively for an operation it cannot hold (stream_capture.h).
#include "plugins/cudart/frontend/stream_capture.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

// cudaErrorStreamCaptureUnsupported (or ...Invalidated) when `stream` captures; nullopt otherwise.
std::optional<cudaError_t> captured(cudaStream_t stream) {
  if (!cr::capturing(stream)) return std::nullopt;
  return cr::refuse_in_capture(stream);
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn,
                                                     void* userData) {
  if (fn == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  if (const auto refused = captured(stream)) return *refused;
  const cudaError_t status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) return status;
  fn(userData);
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream,
                                                        cudaStreamCallback_t callback,
                                                        void* userData, unsigned int flags) {
  if (callback == nullptr || flags != 0) return cr::refuse_locally(cudaErrorInvalidValue);
  if (const auto refused = captured(stream)) return *refused;
  // The callback learns the stream's status: the result of waiting for its work. An error there
  // is the stream's (a fault in earlier work), reported to the callback as natively; the call
  // itself succeeded in enqueueing it.
  const cudaError_t status = cudaStreamSynchronize(stream);
  if (status == cudaErrorDevicesUnavailable || status == cudaErrorInsufficientDriver ||
      status == cudaErrorNoDevice || status == cudaErrorInvalidResourceHandle) {
    return status;  // nothing was enqueued: no stream, no device, no backend
  }
  callback(stream, status, userData);
  return cudaSuccess;
}

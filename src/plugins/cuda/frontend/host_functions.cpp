// Host functions in stream order (cuLaunchHostFunc, cuStreamAddCallback): they are the client's
// code, so they run on the client. The stub waits for the stream's earlier work (a remote
// cuStreamSynchronize) and runs the function before it returns, so that the stream's later work,
// enqueued after this call, starts after the function has finished - the order the driver
// guarantees, at the price of the caller waiting where the driver would not. A capturing stream
// cannot be waited for: host functions are refused there (stream_capture.h).
#include <cuda.h>

#include "plugins/cuda/frontend/stream_capture.h"

namespace {

CUresult run_in_stream_order(CUstream stream, void (*run)(void*), void* data) {
  if (gvirtus::cuda::capturing(stream)) return gvirtus::cuda::refuse_in_capture(stream);
  const CUresult status = cuStreamSynchronize(stream);
  if (status != CUDA_SUCCESS) return status;
  run(data);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuLaunchHostFunc(CUstream hStream,
                                                                            CUhostFn fn,
                                                                            void* userData) {
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return run_in_stream_order(hStream, fn, userData);
}

extern "C" __attribute__((visibility("default"))) CUresult cuStreamAddCallback(
    CUstream hStream, CUstreamCallback callback, void* userData, unsigned int flags) {
  if (callback == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (gvirtus::cuda::capturing(hStream)) return gvirtus::cuda::refuse_in_capture(hStream);
  // The callback learns the stream's status: the result of waiting for its work.
  const CUresult status = cuStreamSynchronize(hStream);
  callback(hStream, status, userData);
  return CUDA_SUCCESS;
}

// What the stub does with copies on a capturing stream (capture_test.cpp runs it through
// gvirtus-run, over a backend with the capturing and accepting devices): a device-to-device copy
// is forwarded and captured; a copy into or from pageable memory is refused with
// cudaErrorStreamCaptureUnsupported, which invalidates the capture, so a later one answers
// cudaErrorStreamCaptureInvalidated and so does cudaStreamEndCapture. A capture without them
// ends in a graph. Prints "ok" and exits 0 when everything answered so.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

namespace {

int failures = 0;

void expect(cudaError_t got, cudaError_t want, const char* what) {
  if (got == want) return;
  std::printf("FAILED: %s: %d, expected %d\n", what, static_cast<int>(got), static_cast<int>(want));
  ++failures;
}

}  // namespace

int main() {
  constexpr size_t kBytes = 4096;
  cudaStream_t stream = nullptr;
  expect(cudaStreamCreate(&stream), cudaSuccess, "cudaStreamCreate");
  void* a = nullptr;
  void* b = nullptr;
  expect(cudaMalloc(&a, kBytes), cudaSuccess, "cudaMalloc a");
  expect(cudaMalloc(&b, kBytes), cudaSuccess, "cudaMalloc b");
  std::vector<char> pageable(kBytes, 'x');

  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture");
  expect(cudaMemcpyAsync(b, a, kBytes, cudaMemcpyDeviceToDevice, stream), cudaSuccess,
         "device-to-device copy in a capture");
  expect(cudaMemcpyAsync(pageable.data(), b, kBytes, cudaMemcpyDeviceToHost, stream),
         cudaErrorStreamCaptureUnsupported, "device-to-host copy in a capture");
  expect(cudaGetLastError(), cudaErrorStreamCaptureUnsupported, "the last error");
  expect(cudaMemcpyAsync(a, pageable.data(), kBytes, cudaMemcpyHostToDevice, stream),
         cudaErrorStreamCaptureInvalidated, "host-to-device copy in an invalidated capture");
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(1);
  expect(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated,
         "cudaStreamEndCapture of an invalidated capture");
  if (graph != nullptr) {
    std::printf("FAILED: an invalidated capture gave a graph\n");
    ++failures;
  }

  // Outside a capture, the same copies are copies.
  expect(cudaMemcpyAsync(pageable.data(), b, kBytes, cudaMemcpyDeviceToHost, stream), cudaSuccess,
         "device-to-host copy after the capture");

  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), cudaSuccess,
         "cudaStreamBeginCapture again");
  expect(cudaMemcpyAsync(a, b, kBytes, cudaMemcpyDeviceToDevice, stream), cudaSuccess,
         "device-to-device copy in the second capture");
  expect(cudaStreamEndCapture(stream, &graph), cudaSuccess, "cudaStreamEndCapture");
  expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy");
  expect(cudaGraphDestroy(graph), cudaErrorInvalidResourceHandle, "cudaGraphDestroy again");
  expect(cudaStreamDestroy(stream), cudaSuccess, "cudaStreamDestroy");
  if (failures != 0) return 1;
  std::printf("ok\n");
  return 0;
}

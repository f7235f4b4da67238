// CUDA graphs by stream capture, as applications and frameworks make them: three kernels captured
// on a stream, the graph instantiated and launched twice, the result checked on the CPU. On the
// simulated device the capture takes the launches and each graph launch replays them.
#include <vector>

#include "library_check.h"

__global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void offset(float* x, float b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}

int main() {
  const int n = 1000;
  std::vector<float> x(n), want(n), got(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13) - 6.f;
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    for (int launch = 0; launch < 2; ++launch) v = (v * 2.f + 1.f) * 0.5f;
    want[i] = v;
  }
  float* d;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(d, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status;
  CHECK_CUDA(cudaStreamIsCapturing(stream, &status));
  if (status != cudaStreamCaptureStatusActive) {
    std::printf("CUDA error: the stream is not capturing (%d)\n", static_cast<int>(status));
    return 1;
  }
  const int blocks = (n + 255) / 256;
  scale<<<blocks, 256, 0, stream>>>(d, 2.f, n);
  offset<<<blocks, 256, 0, stream>>>(d, 1.f, n);
  scale<<<blocks, 256, 0, stream>>>(d, 0.5f, n);
  CHECK_CUDA(cudaGetLastError());
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t executable;
  CHECK_CUDA(cudaGraphInstantiate(&executable, graph, 0));
  CHECK_CUDA(cudaGraphLaunch(executable, stream));
  CHECK_CUDA(cudaGraphLaunch(executable, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(got.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaGraphExecDestroy(executable));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(d));
  return report(got.data(), want.data(), n, 1e-6);
}

// saxpy: y = a * x + y on the GPU, checked against the CPU.
//   saxpy [N]   (N elements, default 1 << 20)
// Prints the maximum error and PASSED or FAILED (exit 0 / 1); on a CUDA error, the error's name
// (exit 1). The output does not depend on timing, so runs can be compared.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sample_check.h"

__global__ void saxpy(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  const long long requested = argc > 1 ? std::atoll(argv[1]) : (1 << 20);
  if (requested <= 0 || requested > (1ll << 30)) {
    std::printf("usage: saxpy [N], 0 < N <= 2^30\n");
    return 2;
  }
  const int n = (int)requested;
  const float a = 2.5f;
  std::vector<float> x(n), y(n), result(n);
  for (int i = 0; i < n; ++i) {
    x[i] = (float)(i % 1000) * 0.001f;
    y[i] = (float)(i % 77) - 38.0f;
  }
  std::printf("saxpy: %d elements, a = %g\n", n, a);

  float *dx = nullptr, *dy = nullptr;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const int block = 256;
  const int grid = (int)std::min<long long>((n + block - 1) / block, 4096);
  saxpy<<<grid, block>>>(n, a, dx, dy);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(result.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));

  // The GPU may or may not fuse the multiply and add; either is within a few ulps.
  double max_error = 0;
  for (int i = 0; i < n; ++i) {
    const double want = (double)a * x[i] + y[i];
    max_error = std::fmax(max_error, std::fabs(result[i] - want));
  }
  std::printf("max error: %.3e\n", max_error);  // the same on every run of one GPU
  const bool passed = max_error <= 1e-5;
  std::printf("%s\n", passed ? "PASSED" : "FAILED");
  return passed ? 0 : 1;
}

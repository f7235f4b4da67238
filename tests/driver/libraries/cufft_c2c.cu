// cufftExecC2C, forward, on 256 complex points, checked against a naive DFT computed in double.
#include <cufft.h>

#include <vector>

#include "library_check.h"

#define CHECK_CUFFT(call) CHECK_STATUS("cuFFT", call, CUFFT_SUCCESS)

int main() {
  const int n = 256;
  const double pi = 3.14159265358979323846;
  std::vector<float> x(2 * n), y(2 * n, 0.f), want(2 * n);
  for (int i = 0; i < n; ++i) {
    x[2 * i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    x[2 * i + 1] = static_cast<float>(i % 5) * 0.5f - 1.f;
  }
  for (int f = 0; f < n; ++f) {
    double re = 0, im = 0;
    for (int t = 0; t < n; ++t) {
      const double angle = -2 * pi * static_cast<double>((f * t) % n) / n;
      re += x[2 * t] * std::cos(angle) - x[2 * t + 1] * std::sin(angle);
      im += x[2 * t] * std::sin(angle) + x[2 * t + 1] * std::cos(angle);
    }
    want[2 * f] = static_cast<float>(re);
    want[2 * f + 1] = static_cast<float>(im);
  }
  cufftComplex *din, *dout;
  CHECK_CUDA(cudaMalloc(&din, n * sizeof(cufftComplex)));
  CHECK_CUDA(cudaMalloc(&dout, n * sizeof(cufftComplex)));
  CHECK_CUDA(cudaMemcpy(din, x.data(), n * sizeof(cufftComplex), cudaMemcpyHostToDevice));
  cufftHandle plan;
  CHECK_CUFFT(cufftPlan1d(&plan, n, CUFFT_C2C, 1));
  CHECK_CUFFT(cufftExecC2C(plan, din, dout, CUFFT_FORWARD));
  CHECK_CUDA(cudaMemcpy(y.data(), dout, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
  CHECK_CUFFT(cufftDestroy(plan));
  CHECK_CUDA(cudaFree(din));
  CHECK_CUDA(cudaFree(dout));
  return report(y.data(), want.data(), y.size(), 1e-4);
}

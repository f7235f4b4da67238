// Shared by the library programs (tests/driver/libraries): each library call is checked, and the
// first that fails stops the program, printing the library, the call and its status to standard
// output. A program that gets through every call prints "calls: ok"; it then compares the result
// with a CPU reference and prints "result: ok" or "result: FAILED" (on the simulated device, which
// computes nothing, the result differs; on a GPU it must match).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_STATUS(library, call, ok)                                              \
  do {                                                                               \
    const auto status_ = (call);                                                     \
    if (status_ != (ok)) {                                                           \
      std::printf("%s error %d in %s\n", library, static_cast<int>(status_), #call); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

#define CHECK_CUDA(call)                                                                 \
  do {                                                                                   \
    const cudaError_t rc_ = (call);                                                      \
    if (rc_ != cudaSuccess) {                                                            \
      std::printf("CUDA error %s (%d) in %s\n", cudaGetErrorName(rc_), (int)rc_, #call); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

// The column-major m x k and k x n inputs both GEMM programs multiply, and their product on the
// CPU: small integers and halves, so that any summation order gives the same floats.
struct GemmCase {
  int m = 64, k = 48, n = 32;
  std::vector<float> a, b, want;
  GemmCase() : a(m * k), b(k * n), want(m * n, 0.f) {
    for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>(i % 7) - 3.f;
    for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>(i % 5) * 0.5f;
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p)
        for (int i = 0; i < m; ++i) want[i + j * m] += a[i + p * m] * b[p + j * k];
  }
};

// Prints the verdict on a result: max relative error against the reference within tolerance.
template <typename T>
inline int report(const T* got, const T* want, size_t n, double tolerance) {
  std::printf("calls: ok\n");
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double scale =
        std::fabs(static_cast<double>(want[i])) > 1 ? std::fabs(static_cast<double>(want[i])) : 1;
    const double error =
        std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])) / scale;
    if (!(error <= worst)) worst = error;  // NaN counts as the worst
  }
  const bool ok = worst <= tolerance;
  std::printf("result: %s (max relative error %g)\n", ok ? "ok" : "FAILED", worst);
  return ok ? 0 : 2;
}

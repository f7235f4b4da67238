// matrixMul: C = A * B in single precision with a tiled shared-memory kernel (like NVIDIA's
// matrixMul sample), checked against a CPU reference with a relative tolerance.
//   matrixMul [hA wA wB]   (A is hA x wA, B is wA x wB; default 320 320 640; any positive sizes)
// Prints PASSED or FAILED (exit 0 / 1); on a CUDA error, the error's name (exit 1). The output
// does not depend on timing, so runs can be compared.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sample_check.h"

constexpr int kTile = 32;

// C (hA x wB) = A (hA x wA) * B (wA x wB), row-major. One thread per element of C; each block
// walks the tiles of A's rows and B's columns through shared memory. Sizes need not be multiples
// of the tile: out-of-range elements load as zero.
__global__ void matrix_mul(float* C, const float* A, const float* B, int hA, int wA, int wB) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float sum = 0.0f;
  for (int t = 0; t < wA; t += kTile) {
    As[ty][tx] = (row < hA && t + tx < wA) ? A[(size_t)row * wA + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < wA && col < wB) ? B[(size_t)(t + ty) * wB + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) sum += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < hA && col < wB) C[(size_t)row * wB + col] = sum;
}

static int size_argument(int argc, char** argv, int index, int fallback) {
  if (argc <= index) return fallback;
  const long value = std::atol(argv[index]);
  if (value <= 0 || value > 8192) {
    std::printf("usage: matrixMul [hA wA wB], sizes from 1 to 8192\n");
    std::exit(2);
  }
  return (int)value;
}

int main(int argc, char** argv) {
  const int hA = size_argument(argc, argv, 1, 320);
  const int wA = size_argument(argc, argv, 2, 320);
  const int wB = size_argument(argc, argv, 3, 640);
  std::printf("matrixMul: C(%d x %d) = A(%d x %d) * B(%d x %d)\n", hA, wB, hA, wA, wA, wB);

  std::vector<float> A((size_t)hA * wA), B((size_t)wA * wB), C((size_t)hA * wB);
  unsigned state = 12345;
  auto next = [&state] {  // values in [-1, 1) in steps of 1/128
    state = state * 1664525u + 1013904223u;
    return (float)((int)(state >> 24) - 128) / 128.0f;
  };
  for (float& v : A) v = next();
  for (float& v : B) v = next();

  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
  CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
  CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
  CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dC, 0, C.size() * sizeof(float)));
  const dim3 block(kTile, kTile);
  const dim3 grid((wB + kTile - 1) / kTile, (hA + kTile - 1) / kTile);
  // A warm-up launch and a few more, as the NVIDIA sample does; the result is the same each time.
  for (int iteration = 0; iteration < 4; ++iteration) {
    matrix_mul<<<grid, block>>>(dC, dA, dB, hA, wA, wB);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(dA));
  CHECK(cudaFree(dB));
  CHECK(cudaFree(dC));

  // Each element within a relative tolerance of the double-precision reference, relative to the
  // sum of the magnitudes of its products (which bounds the single-precision rounding error).
  long long wrong = 0;
  for (int i = 0; i < hA; ++i)
    for (int j = 0; j < wB; ++j) {
      double want = 0, magnitude = 0;
      for (int k = 0; k < wA; ++k) {
        const double product = (double)A[(size_t)i * wA + k] * B[(size_t)k * wB + j];
        want += product;
        magnitude += std::fabs(product);
      }
      const double got = C[(size_t)i * wB + j];
      if (!(std::fabs(got - want) <= 1e-4 * magnitude + 1e-6)) {
        if (wrong < 5) std::printf("C[%d][%d] = %.6f, expected %.6f\n", i, j, got, want);
        ++wrong;
      }
    }
  std::printf("elements outside the tolerance: %lld of %lld\n", wrong, (long long)C.size());
  std::printf("%s\n", wrong == 0 ? "PASSED" : "FAILED");
  return wrong == 0 ? 0 : 1;
}

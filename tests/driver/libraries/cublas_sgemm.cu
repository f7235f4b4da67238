// cublasSgemm on a 64x48 by 48x32 product (column-major), checked against a CPU product.
#include <cublas_v2.h>

#include <vector>

#include "library_check.h"

#define CHECK_CUBLAS(call) CHECK_STATUS("cuBLAS", call, CUBLAS_STATUS_SUCCESS)

int main() {
  const GemmCase g;
  const int m = g.m, k = g.k, n = g.n;
  const std::vector<float>&a = g.a, &b = g.b, &want = g.want;
  std::vector<float> c(m * n, 0.f);
  float *da, *db, *dc;
  CHECK_CUDA(cudaMalloc(&da, a.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&db, b.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dc, c.size() * sizeof(float)));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetMatrix(m, k, sizeof(float), a.data(), m, da, m));
  CHECK_CUBLAS(cublasSetMatrix(k, n, sizeof(float), b.data(), k, db, k));
  const float alpha = 1.f, beta = 0.f;
  CHECK_CUBLAS(
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k, &beta, dc, m));
  CHECK_CUBLAS(cublasGetMatrix(m, n, sizeof(float), dc, m, c.data(), m));
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dc));
  return report(c.data(), want.data(), c.size(), 1e-5);
}

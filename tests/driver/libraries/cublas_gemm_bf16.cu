// cublasGemmEx on bf16 inputs with fp32 output and compute (what PyTorch's bf16 matmul asks for),
// the 64x48 by 48x32 product of library_check.h, whose small integers and halves bf16 holds
// exactly, checked against the CPU product. cuBLAS takes cuBLASLt's heuristics for it, which ask
// the driver for a private table of cuBLASLt's own (docs/driver.md).
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <vector>

#include "library_check.h"

#define CHECK_CUBLAS(call) CHECK_STATUS("cuBLAS", call, CUBLAS_STATUS_SUCCESS)

int main() {
  const GemmCase g;
  const int m = g.m, k = g.k, n = g.n;
  std::vector<__nv_bfloat16> a(g.a.size()), b(g.b.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = __float2bfloat16(g.a[i]);
  for (size_t i = 0; i < b.size(); ++i) b[i] = __float2bfloat16(g.b[i]);
  std::vector<float> c(m * n, 0.f);
  __nv_bfloat16 *da, *db;
  float* dc;
  CHECK_CUDA(cudaMalloc(&da, a.size() * sizeof(__nv_bfloat16)));
  CHECK_CUDA(cudaMalloc(&db, b.size() * sizeof(__nv_bfloat16)));
  CHECK_CUDA(cudaMalloc(&dc, c.size() * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(da, a.data(), a.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), b.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  const float alpha = 1.f, beta = 0.f;
  CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_16BF, m,
                            db, CUDA_R_16BF, k, &beta, dc, CUDA_R_32F, m, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
  CHECK_CUDA(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dc));
  return report(c.data(), g.want.data(), c.size(), 1e-5);
}

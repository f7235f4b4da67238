// cublasLtMatmul on a 64x48 by 48x32 float product (column-major), checked against a CPU product.
#include <cublasLt.h>

#include <vector>

#include "library_check.h"

#define CHECK_CUBLASLT(call) CHECK_STATUS("cuBLASLt", call, CUBLAS_STATUS_SUCCESS)

int main() {
  const GemmCase g;
  const int m = g.m, k = g.k, n = g.n;
  const std::vector<float>&a = g.a, &b = g.b, &want = g.want;
  std::vector<float> c(m * n, 0.f);
  const size_t workspace_size = 4 << 20;
  float *da, *db, *dc;
  void* workspace;
  CHECK_CUDA(cudaMalloc(&da, a.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&db, b.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dc, c.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&workspace, workspace_size));
  CHECK_CUDA(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  cublasLtHandle_t handle;
  CHECK_CUBLASLT(cublasLtCreate(&handle));
  cublasLtMatmulDesc_t desc;
  CHECK_CUBLASLT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK_CUBLASLT(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
  CHECK_CUBLASLT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
  CHECK_CUBLASLT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t preference;
  CHECK_CUBLASLT(cublasLtMatmulPreferenceCreate(&preference));
  CHECK_CUBLASLT(cublasLtMatmulPreferenceSetAttribute(preference,
                                                      CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_size, sizeof(workspace_size)));
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int count = 0;
  CHECK_CUBLASLT(cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, lc, preference, 1,
                                                &heuristic, &count));
  if (count <= 0) {
    std::printf("cuBLASLt error: cublasLtMatmulAlgoGetHeuristic returned no algorithm\n");
    std::exit(1);
  }
  const float alpha = 1.f, beta = 0.f;
  CHECK_CUBLASLT(cublasLtMatmul(handle, desc, &alpha, da, la, db, lb, &beta, dc, lc, dc, lc,
                                &heuristic.algo, workspace, workspace_size, 0));
  CHECK_CUDA(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUBLASLT(cublasLtMatmulPreferenceDestroy(preference));
  CHECK_CUBLASLT(cublasLtMatrixLayoutDestroy(la));
  CHECK_CUBLASLT(cublasLtMatrixLayoutDestroy(lb));
  CHECK_CUBLASLT(cublasLtMatrixLayoutDestroy(lc));
  CHECK_CUBLASLT(cublasLtMatmulDescDestroy(desc));
  CHECK_CUBLASLT(cublasLtDestroy(handle));
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dc));
  CHECK_CUDA(cudaFree(workspace));
  return report(c.data(), want.data(), c.size(), 1e-5);
}

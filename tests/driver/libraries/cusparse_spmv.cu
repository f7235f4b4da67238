// cusparseSpMV of a 32x32 tridiagonal CSR matrix by a dense vector, checked against a CPU product.
#include <cusparse.h>

#include <vector>

#include "library_check.h"

#define CHECK_CUSPARSE(call) CHECK_STATUS("cuSPARSE", call, CUSPARSE_STATUS_SUCCESS)

int main() {
  const int n = 32;
  std::vector<int> row_ptr(n + 1, 0), cols;
  std::vector<float> vals, x(n), y(n, 0.f), want(n, 0.f);
  for (int i = 0; i < n; ++i) {
    for (int j = i - 1; j <= i + 1; ++j) {
      if (j < 0 || j >= n) continue;
      cols.push_back(j);
      vals.push_back(j == i ? 4.f : -1.f - 0.25f * static_cast<float>(i % 3));
    }
    row_ptr[i + 1] = static_cast<int>(cols.size());
    x[i] = static_cast<float>(i % 5) - 2.f;
  }
  for (int i = 0; i < n; ++i)
    for (int p = row_ptr[i]; p < row_ptr[i + 1]; ++p) want[i] += vals[p] * x[cols[p]];
  const int nnz = static_cast<int>(vals.size());
  int *drow_ptr, *dcols;
  float *dvals, *dx, *dy;
  CHECK_CUDA(cudaMalloc(&drow_ptr, (n + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dcols, nnz * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dvals, nnz * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dx, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dy, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(drow_ptr, row_ptr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dcols, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dvals, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cusparseHandle_t handle;
  CHECK_CUSPARSE(cusparseCreate(&handle));
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vec_x, vec_y;
  CHECK_CUSPARSE(cusparseCreateCsr(&mat, n, n, nnz, drow_ptr, dcols, dvals, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vec_x, n, dx, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vec_y, n, dy, CUDA_R_32F));
  const float alpha = 1.f, beta = 0.f;
  size_t buffer_size = 0;
  CHECK_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat,
                                         vec_x, &beta, vec_y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT,
                                         &buffer_size));
  void* buffer;
  CHECK_CUDA(cudaMalloc(&buffer, buffer_size > 0 ? buffer_size : 1));
  CHECK_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vec_x, &beta,
                              vec_y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer));
  CHECK_CUDA(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUSPARSE(cusparseDestroySpMat(mat));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vec_x));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vec_y));
  CHECK_CUSPARSE(cusparseDestroy(handle));
  CHECK_CUDA(cudaFree(buffer));
  CHECK_CUDA(cudaFree(drow_ptr));
  CHECK_CUDA(cudaFree(dcols));
  CHECK_CUDA(cudaFree(dvals));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  return report(y.data(), want.data(), n, 1e-5);
}

// cusolverDnSgetrf + cusolverDnSgetrs (with pivoting) solving a 16x16 system with a known solution.
#include <cusolverDn.h>

#include <vector>

#include "library_check.h"

#define CHECK_CUSOLVER(call) CHECK_STATUS("cuSOLVER", call, CUSOLVER_STATUS_SUCCESS)

int main() {
  const int n = 16;
  std::vector<float> a(n * n), b(n, 0.f), want(n + 2, 0.f), got(n + 2, 0.f);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      a[i + j * n] =
          i == j ? 20.f + static_cast<float>(i) : static_cast<float>((3 * i + 5 * j) % 7) - 3.f;
  for (int i = 0; i < n; ++i) want[i] = static_cast<float>(i % 4) * 0.5f - 0.75f;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) b[i] += a[i + j * n] * want[j];  // want[n], want[n + 1]: info 0
  float *da, *db, *dwork;
  int *dpivots, *dinfo;
  CHECK_CUDA(cudaMalloc(&da, n * n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&db, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dpivots, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dinfo, sizeof(int)));
  CHECK_CUDA(cudaMemcpy(da, a.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cusolverDnHandle_t handle;
  CHECK_CUSOLVER(cusolverDnCreate(&handle));
  int work_size = 0;
  CHECK_CUSOLVER(cusolverDnSgetrf_bufferSize(handle, n, n, da, n, &work_size));
  CHECK_CUDA(cudaMalloc(&dwork, (work_size > 0 ? work_size : 1) * sizeof(float)));
  int info_getrf = -1, info_getrs = -1;
  CHECK_CUSOLVER(cusolverDnSgetrf(handle, n, n, da, n, dwork, dpivots, dinfo));
  CHECK_CUDA(cudaMemcpy(&info_getrf, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUSOLVER(cusolverDnSgetrs(handle, CUBLAS_OP_N, n, 1, da, n, dpivots, db, n, dinfo));
  CHECK_CUDA(cudaMemcpy(&info_getrs, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(got.data(), db, n * sizeof(float), cudaMemcpyDeviceToHost));
  got[n] = static_cast<float>(info_getrf);  // a nonzero info is a wrong result, not a failed call
  got[n + 1] = static_cast<float>(info_getrs);
  CHECK_CUSOLVER(cusolverDnDestroy(handle));
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dwork));
  CHECK_CUDA(cudaFree(dpivots));
  CHECK_CUDA(cudaFree(dinfo));
  return report(got.data(), want.data(), got.size(), 1e-4);
}

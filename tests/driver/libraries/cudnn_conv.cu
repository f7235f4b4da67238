// cudnnConvolutionForward of a 1x3x16x16 input by 8x3x3x3 filters (pad 1), checked against the CPU.
#include <cudnn.h>

#include <vector>

#include "library_check.h"

#define CHECK_CUDNN(call) CHECK_STATUS("cuDNN", call, CUDNN_STATUS_SUCCESS)

int main() {
  const int c = 3, h = 16, w = 16, k = 8, r = 3, s = 3;
  std::vector<float> x(c * h * w), f(k * c * r * s), y(k * h * w, 0.f), want(k * h * w, 0.f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.5f - 1.5f;
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  for (int o = 0; o < k; ++o)
    for (int i = 0; i < h; ++i)
      for (int j = 0; j < w; ++j)
        for (int ch = 0; ch < c; ++ch)
          for (int u = 0; u < r; ++u)
            for (int v = 0; v < s; ++v) {
              const int yi = i + u - 1, xj = j + v - 1;
              if (yi < 0 || yi >= h || xj < 0 || xj >= w) continue;
              want[(o * h + i) * w + j] +=
                  f[((o * c + ch) * r + u) * s + v] * x[(ch * h + yi) * w + xj];
            }
  float *dx, *df, *dy;
  CHECK_CUDA(cudaMalloc(&dx, x.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&df, f.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dy, y.size() * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(df, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudnnHandle_t handle;
  CHECK_CUDNN(cudnnCreate(&handle));
  cudnnTensorDescriptor_t x_desc, y_desc;
  cudnnFilterDescriptor_t f_desc;
  cudnnConvolutionDescriptor_t conv;
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&x_desc));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&y_desc));
  CHECK_CUDNN(cudnnCreateFilterDescriptor(&f_desc));
  CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&conv));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, c, h, w));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, k, h, w));
  CHECK_CUDNN(cudnnSetFilter4dDescriptor(f_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c, r, s));
  CHECK_CUDNN(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0, chosen = -1;
  CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(
      handle, x_desc, f_desc, conv, y_desc, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
  for (int i = 0; i < returned && chosen < 0; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS) chosen = i;
  if (chosen < 0) {
    std::printf(
        "cuDNN error: cudnnGetConvolutionForwardAlgorithm_v7 returned no usable algorithm\n");
    std::exit(1);
  }
  const cudnnConvolutionFwdAlgo_t algo = perf[chosen].algo;
  size_t workspace_size = 0;
  CHECK_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc, f_desc, conv, y_desc, algo,
                                                      &workspace_size));
  void* workspace;
  CHECK_CUDA(cudaMalloc(&workspace, workspace_size > 0 ? workspace_size : 1));
  const float alpha = 1.f, beta = 0.f;
  CHECK_CUDNN(cudnnConvolutionForward(handle, &alpha, x_desc, dx, f_desc, df, conv, algo, workspace,
                                      workspace_size, &beta, y_desc, dy));
  CHECK_CUDA(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDNN(cudnnDestroyConvolutionDescriptor(conv));
  CHECK_CUDNN(cudnnDestroyFilterDescriptor(f_desc));
  CHECK_CUDNN(cudnnDestroyTensorDescriptor(x_desc));
  CHECK_CUDNN(cudnnDestroyTensorDescriptor(y_desc));
  CHECK_CUDNN(cudnnDestroy(handle));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(df));
  CHECK_CUDA(cudaFree(dy));
  CHECK_CUDA(cudaFree(workspace));
  return report(y.data(), want.data(), y.size(), 1e-4);
}

// An application whose kernels print (kernel_output_test.cpp, against the printing device): its
// own lines and the device's must come out in the order they were made, on the streams they
// were made on.
#include <cuda_runtime_api.h>

#include <cstdio>

int main() {
  std::printf("before the first synchronisation\n");
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  std::printf("between\n");
  if (cudaStreamSynchronize(nullptr) != cudaSuccess) return 2;
  std::printf("between again\n");
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  std::fprintf(stderr, "the application's own error line\n");
  std::printf("after\n");
  return 0;
}

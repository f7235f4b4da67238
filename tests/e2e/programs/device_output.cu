// The device's output: printf in kernels reaches the application's stdout when CUDA flushes it (a
// device, stream or event synchronisation, a blocking copy), before that call returns, in order;
// a failed device assertion makes the synchronisation report cudaErrorAssert (its message goes to
// stderr). Without a GPU nothing launches and every call reports the same error as natively.
#include <cassert>
#include <cstdio>

#include "check.h"

// One thread prints, so that the lines come in one order on every run.
__global__ void count_to(int tag, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    for (int i = 0; i < n; ++i) printf("kernel %d says %d of %d (%.2f)\n", tag, i + 1, n, 0.5 * i);
  }
}

__global__ void must_be_positive(int value) {
  assert(value > 0);
}

int main() {
  // Unbuffered: the program's own lines and the device's come out in the order they were made,
  // whether the driver prints through stdio or straight to fd 1.
  std::setvbuf(stdout, nullptr, _IONBF, 0);

  count_to<<<1, 32>>>(1, 3);
  SHOW(cudaGetLastError());
  SHOW(cudaDeviceSynchronize());

  cudaStream_t stream = nullptr;
  SHOW(cudaStreamCreate(&stream));
  count_to<<<2, 32, 0, stream>>>(2, 2);
  count_to<<<1, 1, 0, stream>>>(3, 1);
  SHOW(cudaStreamSynchronize(stream));

  int* dev = nullptr;
  SHOW(cudaMalloc(&dev, sizeof(int)));
  count_to<<<1, 1>>>(4, 2);
  int host = 0;
  SHOW(cudaMemcpy(&host, dev, sizeof(int), cudaMemcpyDeviceToHost));

  cudaEvent_t done = nullptr;
  SHOW(cudaEventCreate(&done));
  count_to<<<1, 1, 0, stream>>>(5, 1);
  SHOW(cudaEventRecord(done, stream));
  SHOW(cudaEventSynchronize(done));

  // Last: a failed assertion leaves the context unusable.
  must_be_positive<<<1, 1>>>(-1);
  SHOW(cudaDeviceSynchronize());
  std::printf("done\n");
  return 0;
}

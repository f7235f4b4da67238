// The printing device: a test double preloaded into gvirtus-backend before the accepting device
// (bench/copy/accepting_device.cpp), on a machine without a GPU, that prints at each
// synchronisation what a GPU's kernels would have printed, as the CUDA driver does when it
// flushes the device's printf buffer: through stdio left unflushed to stdout, and an assertion's
// message straight to fd 2 at every third synchronisation, if it is a device one
// (kernel_output_test.cpp). It is never GPU evidence.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#define PRINTING_DEVICE_EXPORT __attribute__((visibility("default")))

namespace {

int synchronisations = 0;

}  // namespace

extern "C" {

PRINTING_DEVICE_EXPORT cudaError_t cudaDeviceSynchronize() {
  ++synchronisations;
  std::printf("kernel printf at synchronisation %d\n", synchronisations);
  if (synchronisations % 3 == 0) {
    const char assertion[] = "kernel.cu:7: void check(): Assertion `ok` failed.\n";
    (void)!::write(STDERR_FILENO, assertion, std::strlen(assertion));
  }
  return cudaSuccess;
}

PRINTING_DEVICE_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t) {
  ++synchronisations;
  std::printf("kernel printf at stream synchronisation %d\n", synchronisations);
  return cudaSuccess;
}

}  // extern "C"

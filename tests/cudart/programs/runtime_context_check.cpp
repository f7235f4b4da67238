// The runtime's current context as the driver API sees it in runtime mode
// (runtime_context_test.cpp runs it through gvirtus-run): natively NVIDIA's runtime makes the
// current device's primary context current on a thread at the thread's first call that needs a
// context and at cudaSetDevice, and the driver's calls on that thread see it (NVIDIA's
// cudaCompressibleMemory sample asks cuCtxGetDevice after runtime calls; cuFFT calls the driver
// beside the program's runtime calls). Prints "runtime context: ok" and exits 0 when every
// answer is the native one.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <thread>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (ok) return;
  std::printf("FAILED: %s\n", what);
  ++failures;
}

}  // namespace

int main() {
  check(cuInit(0) == CUDA_SUCCESS, "cuInit");
  CUcontext current = reinterpret_cast<CUcontext>(1);
  check(cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == nullptr,
        "no context before the runtime's first call");
  int count = 0;
  check(cudaGetDeviceCount(&count) == cudaSuccess && count > 0, "cudaGetDeviceCount");
  check(cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == nullptr,
        "none after a call that needs none");
  check(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice");
  check(cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != nullptr,
        "the runtime's context is the driver's current one");
  CUdevice device = -1;
  check(cuCtxGetDevice(&device) == CUDA_SUCCESS && device == 0, "its device");
  CUcontext primary = nullptr;
  check(cuDevicePrimaryCtxRetain(&primary, 0) == CUDA_SUCCESS && primary == current,
        "it is the device's primary context");
  check(cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS, "cuDevicePrimaryCtxRelease");
  CUdeviceptr memory = 0;
  check(cuMemAlloc(&memory, 4096) == CUDA_SUCCESS, "a driver allocation in it");
  check(cuMemFree(memory) == CUDA_SUCCESS, "cuMemFree");
  std::thread([&] {
    void* pointer = nullptr;
    check(cudaMalloc(&pointer, 256) == cudaSuccess, "cudaMalloc on a new thread");
    CUcontext there = nullptr;
    check(cuCtxGetCurrent(&there) == CUDA_SUCCESS && there == current,
          "a thread's first runtime call makes the context current there");
    check(cudaFree(pointer) == cudaSuccess, "cudaFree");
  }).join();
  std::thread([&] {
    int devices = 0;
    check(cudaGetDeviceCount(&devices) == cudaSuccess, "cudaGetDeviceCount on a new thread");
    CUcontext there = reinterpret_cast<CUcontext>(1);
    check(cuCtxGetCurrent(&there) == CUDA_SUCCESS && there == nullptr,
          "a thread whose runtime calls needed no context has none");
  }).join();
  if (failures == 0) std::printf("runtime context: ok\n");
  return failures == 0 ? 0 : 1;
}

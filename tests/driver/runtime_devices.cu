// NVIDIA's runtime (linked statically, as nvcc links it by default) on several devices: each
// device made current with cudaSetDevice, its properties, an allocation on it, then peer access
// and a peer copy between devices 0 and 1. Printed line by line for simulated_devices_test.cpp.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
  int count = -1;
  const cudaError_t counted = cudaGetDeviceCount(&count);
  std::printf("count %d -> %d\n", static_cast<int>(counted), count);
  for (int dev = 0; dev < count; ++dev) {
    cudaDeviceProp properties{};
    void* memory = nullptr;
    int current = -1;
    const cudaError_t set = cudaSetDevice(dev);
    const cudaError_t queried = cudaGetDeviceProperties(&properties, dev);
    const cudaError_t allocated = cudaMalloc(&memory, 64);
    cudaGetDevice(&current);
    std::printf("device %d set %d properties %d malloc %d current %d name \"%s\" bus %d\n", dev,
                static_cast<int>(set), static_cast<int>(queried), static_cast<int>(allocated),
                current, properties.name, properties.pciBusID);
  }
  if (count >= 2) {
    int can = -1;
    cudaDeviceCanAccessPeer(&can, 0, 1);
    cudaSetDevice(0);
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(1, 0);
    std::printf("peer %d enable %d\n", can, static_cast<int>(enabled));
    void* a = nullptr;
    void* b = nullptr;
    cudaMalloc(&a, 16);
    cudaSetDevice(1);
    cudaMalloc(&b, 16);
    std::printf("memcpy peer %d\n", static_cast<int>(cudaMemcpyPeer(b, 1, a, 0, 16)));
  }
  std::printf("last error %d\n", static_cast<int>(cudaGetLastError()));
  return 0;
}

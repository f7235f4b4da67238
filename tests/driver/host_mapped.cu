// Mapped page-locked host memory in driver mode, printed call by call: a cuMemHostAlloc block with
// a device pointer (over shm, in the memory the backend maps too) that the device reads as the
// host wrote it, and that the host sees the device's writes through once synchronised. Over a
// transport that shares nothing there is no device pointer (CUDA_ERROR_NOT_SUPPORTED).
#include <cuda.h>

#include <cstdio>
#include <cstring>

#include "show_calls.h"

int main() {
  CUdevice device = 0;
  show_primary_context(device);
  const size_t bytes = 8192;
  void* host = nullptr;
  SHOW(cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_DEVICEMAP));
  if (host == nullptr) return 1;
  std::memset(host, 0x11, bytes);
  CUdeviceptr mapped = 0;
  const CUresult pointer = cuMemHostGetDevicePointer(&mapped, host, 0);
  std::printf("cuMemHostGetDevicePointer -> %d\n", static_cast<int>(pointer));
  if (pointer == CUDA_SUCCESS) {
    CUdeviceptr attribute = 0;
    SHOW(cuPointerGetAttribute(&attribute, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                               reinterpret_cast<CUdeviceptr>(host)));
    std::printf("the attribute is the device pointer: %s\n", attribute == mapped ? "yes" : "no");
    unsigned char back[8192] = {};
    SHOW(cuMemcpyDtoH(back, mapped, bytes));
    bool same = true;
    for (unsigned char b : back) same = same && b == 0x11;
    std::printf("the device reads what the host wrote: %s\n", same ? "yes" : "no");
    SHOW(cuMemsetD8(mapped + bytes / 2, 0x5a, bytes / 2));
    SHOW(cuCtxSynchronize());
    const auto* seen = static_cast<const unsigned char*>(host);
    bool written = true;
    for (size_t i = 0; i < bytes; ++i)
      written = written && seen[i] == (i < bytes / 2 ? 0x11 : 0x5a);
    std::printf("the host sees what the device wrote: %s\n", written ? "yes" : "no");
  }
  SHOW(cuMemFreeHost(host));
  SHOW(cuDevicePrimaryCtxRelease(device));
  return 0;
}

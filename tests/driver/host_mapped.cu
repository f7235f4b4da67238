// Mapped page-locked host memory in driver mode, printed call by call: a cuMemHostAlloc block with
// a device pointer (over shm, in the memory the backend maps too) that the device reads as the
// host wrote it, and that the host sees the device's writes through once synchronised. Over a
// transport that shares nothing there is no device pointer (CUDA_ERROR_NOT_SUPPORTED). Then
// copies between page-locked memory and device memory, synchronous and on a stream, each way,
// with an offset into the block: over shm no bytes travel (the backend copies the shared pages).
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
  // Copies through page-locked memory: up from the block, back into it, and between its halves
  // on a stream (at an offset), each checked.
  auto* pinned = static_cast<unsigned char*>(host);
  for (size_t i = 0; i < bytes; ++i) pinned[i] = static_cast<unsigned char>(i * 7);
  CUdeviceptr buffer = 0;
  SHOW(cuMemAlloc(&buffer, bytes));
  SHOW(cuMemcpyHtoD(buffer, host, bytes));
  std::memset(host, 0, bytes);
  SHOW(cuMemcpyDtoH(host, buffer, bytes));
  bool round_trip = true;
  for (size_t i = 0; i < bytes; ++i) round_trip = round_trip && pinned[i] == (unsigned char)(i * 7);
  std::printf("a synchronous round trip through page-locked memory: %s\n",
              round_trip ? "intact" : "CHANGED");
  CUstream stream = nullptr;
  SHOW(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  SHOW(cuMemcpyHtoDAsync(buffer + 1000, pinned + 100, 3000, stream));
  SHOW(cuMemcpyDtoHAsync(pinned + 5000, buffer + 1000, 3000, stream));
  SHOW(cuStreamSynchronize(stream));
  bool moved = true;
  for (size_t i = 0; i < 3000; ++i) moved = moved && pinned[5000 + i] == pinned[100 + i];
  std::printf("an asynchronous round trip at offsets: %s\n", moved ? "intact" : "CHANGED");
  SHOW(cuStreamDestroy(stream));
  SHOW(cuMemFree(buffer));
  SHOW(cuMemFreeHost(host));
  SHOW(cuDevicePrimaryCtxRelease(device));
  return 0;
}

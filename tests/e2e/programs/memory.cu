// Device memory: allocation, set, copies every way (chunked above 16 MiB), pitched allocations.
#include <cstring>
#include <vector>

#include "check.h"

int main() {
  const size_t n = 1 << 20;
  std::vector<unsigned char> host(n), back(n, 0xee);
  for (size_t i = 0; i < n; ++i) host[i] = (unsigned char)(i * 7 + 3);
  void* dev = nullptr;
  if (OK(cudaMalloc(&dev, n))) {
    if (OK(cudaMemcpy(dev, host.data(), n, cudaMemcpyHostToDevice)) &&
        OK(cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost))) {
      EXPECT(std::memcmp(host.data(), back.data(), n) == 0);
    }
    if (OK(cudaMemset(dev, 0x5a, n)) &&
        OK(cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost))) {
      EXPECT(back[0] == 0x5a && back[n - 1] == 0x5a);
    }
    void* dev2 = nullptr;
    if (OK(cudaMalloc(&dev2, n))) {
      SHOW(cudaMemcpy(dev2, dev, n, cudaMemcpyDeviceToDevice));
      SHOW(cudaFree(dev2));
    }
    SHOW(cudaFree(dev));
  } else {
    // Failed calls leave outputs and buffers untouched, natively and remotely alike.
    EXPECT(dev == nullptr);
    SHOW(cudaMemcpy(back.data(), (void*)0x1000, 64, cudaMemcpyDeviceToHost));
    EXPECT(back[0] == 0xee);
  }
  // A copy much larger than one chunk.
  const size_t big = (size_t{40} << 20) + 123;
  std::vector<unsigned char> large(big), large_back(big);
  for (size_t i = 0; i < big; ++i) large[i] = (unsigned char)(i ^ (i >> 11));
  void* dev_big = nullptr;
  if (OK(cudaMalloc(&dev_big, big))) {
    if (OK(cudaMemcpy(dev_big, large.data(), big, cudaMemcpyHostToDevice)) &&
        OK(cudaMemcpy(large_back.data(), dev_big, big, cudaMemcpyDeviceToHost))) {
      EXPECT(large == large_back);
    }
    SHOW(cudaFree(dev_big));
  }
  // The same through cudaMemcpyAsync on a stream.
  cudaStream_t stream = nullptr;
  SHOW(cudaStreamCreate(&stream));
  std::vector<unsigned char> async_back(n, 0xee);
  void* dev_async = nullptr;
  if (OK(cudaMalloc(&dev_async, n))) {
    SHOW(cudaMemcpyAsync(dev_async, host.data(), n, cudaMemcpyHostToDevice, stream));
    SHOW(cudaMemcpyAsync(async_back.data(), dev_async, n, cudaMemcpyDeviceToHost, stream));
    SHOW(cudaStreamSynchronize(stream));
    EXPECT(std::memcmp(host.data(), async_back.data(), n) == 0);
    SHOW(cudaFree(dev_async));
  } else {
    SHOW(cudaMemcpyAsync((void*)0x1000, host.data(), 64, cudaMemcpyHostToDevice, stream));
    SHOW(cudaMemcpyAsync(async_back.data(), (void*)0x1000, 64, cudaMemcpyDeviceToHost, stream));
    EXPECT(async_back[0] == 0xee);
  }
  SHOW(cudaStreamDestroy(stream));
  std::vector<unsigned char> h2h(4096, 0);
  if (OK(cudaMemcpy(h2h.data(), host.data(), 4096, cudaMemcpyHostToHost))) {
    EXPECT(std::memcmp(h2h.data(), host.data(), 4096) == 0);
  }
  void* pitched = nullptr;
  size_t pitch = 0;
  if (OK(cudaMallocPitch(&pitched, &pitch, 1000, 10))) {
    EXPECT(pitch >= 1000);
    std::vector<unsigned char> rows(pitch * 10, 0);
    if (OK(cudaMemset2D(pitched, pitch, 0x11, 1000, 10)) &&
        OK(cudaMemset2DAsync(pitched, pitch, 0x22, 500, 10, nullptr)) &&
        OK(cudaMemcpy(rows.data(), pitched, pitch * 10, cudaMemcpyDeviceToHost))) {
      EXPECT(rows[0] == 0x22 && rows[499] == 0x22 && rows[500] == 0x11 && rows[999] == 0x11);
      EXPECT(rows[9 * pitch + 999] == 0x11);
    }
    SHOW(cudaFree(pitched));
  } else {
    SHOW(cudaMemset2D(pitched, 1024, 0x11, 1000, 10));
    SHOW(cudaMemset2DAsync(pitched, 1024, 0x22, 500, 10, nullptr));
  }
  SHOW(cudaFree(nullptr));
  SHOW(cudaGetLastError());

  std::printf("== pointer attributes and cudaDeviceReset\n");
  void* d = nullptr;
  if (OK(cudaMalloc(&d, 1 << 20))) {
    cudaPointerAttributes a;
    std::memset(&a, 0x5a, sizeof a);
    if (OK(cudaPointerGetAttributes(&a, (char*)d + 4096)))
      std::printf("  type %d device %d devicePointer %s hostPointer %s\n", (int)a.type, a.device,
                  a.devicePointer == (char*)d + 4096 ? "input" : "other",
                  a.hostPointer == nullptr ? "null" : "some");
    SHOW(cudaDeviceReset());
    // The reset freed it: a memset into it now fails at once, as for any bad pointer.
    SHOW(cudaMemsetAsync(d, 0, 1 << 20, nullptr));
    SHOW(cudaGetLastError());
    SHOW(cudaDeviceSynchronize());
    SHOW(cudaGetLastError());
  } else {
    SHOW(cudaDeviceReset());
  }
  return 0;
}

// Page-locked memory that the GPU reaches: device pointers of pinned allocations, kernels
// writing through cudaHostGetDevicePointer's pointer and through the host pointer itself
// (unified addressing), large copies to and from pinned memory (sync and async, both directions),
// and pinned blocks freed and allocated again. Through gvirtus this needs a transport that shares
// memory with the backend (shm's arena); the parity test runs it over shm only.
#include <cstdint>
#include <cstring>
#include <vector>

#include "check.h"

__global__ void k_write(int* p, int n, int base) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + 3 * i;
}

__global__ void k_add(const int* in, int* out, int n, int add) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + add;
}

static const char* relation(const void* attribute, const void* input) {
  return attribute == nullptr ? "null" : attribute == input ? "input" : "other";
}

static bool is_pattern(const int* p, int n, int base) {
  for (int i = 0; i < n; ++i)
    if (p[i] != base + 3 * i) return false;
  return true;
}

int main() {
  SHOW(cudaSetDeviceFlags(cudaDeviceMapHost));
  const size_t bytes = size_t{48} << 20;  // three chunks of a copy that travels through a transport
  const int n = (int)(bytes / sizeof(int));
  int* dev = nullptr;
  const bool have_dev = OK(cudaMalloc((void**)&dev, bytes));
  cudaStream_t stream = nullptr;
  SHOW(cudaStreamCreate(&stream));

  std::printf("== device pointers of pinned memory\n");
  struct Kind {
    const char* name;
    int flags;  // -1: cudaMallocHost
  };
  const Kind kinds[] = {
      {"cudaMallocHost", -1},
      {"cudaHostAlloc(cudaHostAllocDefault)", cudaHostAllocDefault},
      {"cudaHostAlloc(cudaHostAllocMapped)", cudaHostAllocMapped},
      {"cudaHostAlloc(Portable | Mapped)", cudaHostAllocPortable | cudaHostAllocMapped},
      {"cudaHostAlloc(cudaHostAllocWriteCombined)", cudaHostAllocWriteCombined},
  };
  for (const Kind& kind : kinds) {
    int* h = nullptr;
    const cudaError_t rc = kind.flags < 0 ? cudaMallocHost((void**)&h, 4096)
                                          : cudaHostAlloc((void**)&h, 4096, (unsigned)kind.flags);
    if (!ok_impl(rc, kind.name)) continue;
    EXPECT(((uintptr_t)h & 4095) == 0);
    cudaPointerAttributes a;
    std::memset(&a, 0, sizeof a);
    if (OK(cudaPointerGetAttributes(&a, h)))
      std::printf("  type %d devicePointer %s hostPointer %s\n", (int)a.type,
                  relation(a.devicePointer, h), relation(a.hostPointer, h));
    void* view = nullptr;
    if (OK(cudaHostGetDevicePointer(&view, h, 0)))
      std::printf("  cudaHostGetDevicePointer: %s\n", relation(view, h));
    if (OK(cudaHostGetDevicePointer(&view, h + 100, 0)))
      std::printf("  cudaHostGetDevicePointer(+400 bytes): %s\n", relation(view, h + 100));
    SHOW(cudaFreeHost(h));
  }

  std::printf("== kernels writing into pinned memory\n");
  int* mapped = nullptr;
  if (OK(cudaHostAlloc((void**)&mapped, 1 << 20, cudaHostAllocMapped))) {
    int* view = nullptr;
    if (OK(cudaHostGetDevicePointer((void**)&view, mapped, 0))) {
      std::memset(mapped, 0, 1 << 20);
      k_write<<<1024, 256>>>(view, 1 << 18, 11);
      if (ok_impl(cudaGetLastError(), "launch k_write (device pointer)") &&
          OK(cudaDeviceSynchronize()))
        EXPECT(is_pattern(mapped, 1 << 18, 11));
    }
    // Unified addressing: the host pointer works in kernels as it is.
    std::memset(mapped, 0, 1 << 20);
    k_write<<<1024, 256, 0, stream>>>(mapped, 1 << 18, -7);
    if (ok_impl(cudaGetLastError(), "launch k_write (host pointer)") &&
        OK(cudaStreamSynchronize(stream)))
      EXPECT(is_pattern(mapped, 1 << 18, -7));
    // A kernel reading pinned memory the host wrote.
    if (have_dev) {
      k_add<<<1024, 256>>>(mapped, dev, 1 << 18, 18);
      std::vector<int> back(1 << 18);
      if (ok_impl(cudaGetLastError(), "launch k_add (reads pinned)") &&
          OK(cudaMemcpy(back.data(), dev, back.size() * sizeof(int), cudaMemcpyDeviceToHost)))
        EXPECT(is_pattern(back.data(), 1 << 18, 11));
    }
    SHOW(cudaFreeHost(mapped));
  }

  std::printf("== large copies to and from pinned memory\n");
  int *up = nullptr, *down = nullptr;
  if (have_dev && OK(cudaMallocHost((void**)&up, bytes)) &&
      OK(cudaHostAlloc((void**)&down, bytes, cudaHostAllocDefault))) {
    for (int i = 0; i < n; ++i) up[i] = 5 + 3 * i;
    std::memset(down, 0, bytes);
    if (OK(cudaMemcpy(dev, up, bytes, cudaMemcpyHostToDevice)) &&
        OK(cudaMemcpy(down, dev, bytes, cudaMemcpyDeviceToHost)))
      EXPECT(is_pattern(down, n, 5));
    // Async both ways on a stream, with offsets, then once more with cudaMemcpyDefault.
    std::memset(down, 0, bytes);
    if (OK(cudaMemsetAsync(dev, 0, bytes, stream)) &&
        OK(cudaMemcpyAsync(dev + 1000, up + 1000, bytes / 2, cudaMemcpyHostToDevice, stream)) &&
        OK(cudaMemcpyAsync(down + 1000, dev + 1000, bytes / 2, cudaMemcpyDeviceToHost, stream)) &&
        OK(cudaStreamSynchronize(stream)))
      EXPECT(std::memcmp(down + 1000, up + 1000, bytes / 2) == 0 && down[999] == 0);
    std::memset(down, 0, bytes);
    if (OK(cudaMemcpyAsync(dev, up, bytes, cudaMemcpyDefault, stream)) &&
        OK(cudaMemcpyAsync(down, dev, bytes, cudaMemcpyDefault, stream)) &&
        OK(cudaStreamSynchronize(stream)))
      EXPECT(is_pattern(down, n, 5));
  }
  if (up != nullptr) SHOW(cudaFreeHost(up));
  if (down != nullptr) SHOW(cudaFreeHost(down));

  std::printf("== pinned blocks freed and allocated again\n");
  {
    std::vector<void*> blocks;
    bool all = true;
    for (int round = 0; round < 200 && all; ++round) {
      void* p = nullptr;
      const size_t size = 4096 * (size_t)(1 + (round * 7) % 33) - (size_t)(round % 5);
      all = cudaMallocHost(&p, size) == cudaSuccess && ((uintptr_t)p & 4095) == 0;
      if (all) {
        std::memset(p, round & 0xff, size);
        blocks.push_back(p);
      }
      if (round % 3 == 2 && !blocks.empty()) {
        all = all && cudaFreeHost(blocks[blocks.size() / 2]) == cudaSuccess;
        blocks.erase(blocks.begin() + (long)(blocks.size() / 2));
      }
    }
    std::printf("200 allocations, a third freed on the way: %s\n", all ? "all ok" : "a failure");
    for (void* p : blocks) all = all && cudaFreeHost(p) == cudaSuccess;
    std::printf("the rest freed: %s\n", all ? "all ok" : "a failure");
    SHOW(cudaGetLastError());
  }

  if (have_dev) SHOW(cudaFree(dev));
  SHOW(cudaStreamDestroy(stream));
  SHOW(cudaDeviceSynchronize());
  SHOW(cudaGetLastError());
  return 0;
}

// Managed memory through the runtime stub (docs/managed-memory.md), against the accepting device
// in "keep" mode (its memory is host memory, its copies real): the host's writes reach the device
// (the backend copies the managed memory into an allocation of its own, which comes back to be
// checked), and the device's writes (a copy into the managed memory) reach the host, over
// several rounds; the stub's own copies of managed memory take the same route. Prints
// "managed: ok" and exits 0, or says what was wrong and exits 1.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr size_t kBytes = size_t{16} << 20;
constexpr size_t kWords = kBytes / sizeof(uint32_t);

bool check(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return true;
  std::printf("%s: %s\n", what, cudaGetErrorName(rc));
  return false;
}

}  // namespace

int main() {
  uint32_t* managed = nullptr;
  uint32_t* device = nullptr;
  if (!check(cudaMallocManaged(reinterpret_cast<void**>(&managed), kBytes, cudaMemAttachGlobal),
             "cudaMallocManaged") ||
      !check(cudaMalloc(reinterpret_cast<void**>(&device), kBytes), "cudaMalloc")) {
    return 1;
  }
  cudaPointerAttributes attributes{};
  if (!check(cudaPointerGetAttributes(&attributes, managed), "cudaPointerGetAttributes")) return 1;
  if (attributes.type != cudaMemoryTypeManaged) {
    std::printf("the pointer is not managed (type %d)\n", static_cast<int>(attributes.type));
    return 1;
  }
  std::vector<uint32_t> back(kWords), fill(kWords);
  for (uint32_t round = 0; round < 4; ++round) {
    // The host writes; the device reads (a copy on the backend), and that comes back here.
    for (size_t i = 0; i < kWords; ++i) managed[i] = round * 100003u + static_cast<uint32_t>(i);
    if (!check(cudaMemcpy(device, managed, kBytes, cudaMemcpyDefault), "to the device copy") ||
        !check(cudaMemcpy(back.data(), device, kBytes, cudaMemcpyDeviceToHost), "back")) {
      return 1;
    }
    for (size_t i = 0; i < kWords; ++i) {
      if (back[i] != round * 100003u + i) {
        std::printf("round %u: the device saw %u at %zu\n", round, back[i], i);
        return 1;
      }
    }
    // The device writes (a copy into the managed memory); the host reads after synchronising.
    for (size_t i = 0; i < kWords; ++i) fill[i] = ~(round * 7u + static_cast<uint32_t>(i));
    if (!check(cudaMemcpy(managed, fill.data(), kBytes, cudaMemcpyHostToDevice), "into managed") ||
        !check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) {
      return 1;
    }
    for (size_t i = 0; i < kWords; ++i) {
      if (managed[i] != fill[i]) {
        std::printf("round %u: the host saw %u at %zu\n", round, managed[i], i);
        return 1;
      }
    }
  }
  // A batch: two ranges prefetched, then the second discarded - the accepting device fills a
  // discarded range with 0xdd bytes (indeterminate, as CUDA says), which the host sees at once
  // after synchronising: the mirror dropped its copy of the range, and kept the rest.
  void* ranges[] = {managed, managed + kWords / 2};
  size_t sizes[] = {kBytes / 4, kBytes / 4};
  cudaMemLocation on_device{};
  on_device.type = cudaMemLocationTypeDevice;
  size_t first = 0;
  const uint32_t before = managed[0];
  if (!check(cudaMemPrefetchBatchAsync(ranges, sizes, 2, &on_device, &first, 1, 0, nullptr),
             "cudaMemPrefetchBatchAsync") ||
      !check(cudaMemDiscardBatchAsync(ranges + 1, sizes + 1, 1, 0, nullptr),
             "cudaMemDiscardBatchAsync") ||
      !check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the batches")) {
    return 1;
  }
  if (managed[kWords / 2] != 0xddddddddu || managed[0] != before) {
    std::printf("after the discard the host saw %#x (discarded) and %#x (kept, was %#x)\n",
                managed[kWords / 2], managed[0], before);
    return 1;
  }
  void* outside[] = {&first};
  if (cudaMemDiscardBatchAsync(outside, sizes, 1, 0, nullptr) != cudaErrorInvalidValue) {
    std::printf("a discard of memory that is not managed was not refused\n");
    return 1;
  }
  (void)cudaGetLastError();
  if (!check(cudaFree(device), "cudaFree") || !check(cudaFree(managed), "cudaFree managed")) {
    return 1;
  }
  std::printf("managed: ok\n");
  return 0;
}

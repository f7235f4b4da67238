// Managed memory (docs/managed-memory.md): 64 MiB allocated with cudaMallocManaged, then many
// rounds alternating the host writing every element and a kernel updating every element, each
// checked against a CPU reference on both sides of the boundary (the kernel sees what the host
// wrote before the launch; the host sees what the kernel wrote once it has synchronised). Then a
// memset and copies into and out of managed memory, its pointer attributes, and the free. A
// device-side read back is a copy into device memory of its own and back to the host.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.h"

__global__ void add_index(uint32_t* words, size_t n, uint32_t bump) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) words[i] += static_cast<uint32_t>(i) + bump;
}

constexpr size_t kBytes = size_t{64} << 20;
constexpr size_t kWords = kBytes / sizeof(uint32_t);
constexpr int kRounds = 8;
constexpr int kThreads = 256;

int main() {
  uint32_t* words = nullptr;
  if (!OK(cudaMallocManaged(&words, kBytes, cudaMemAttachGlobal))) return 0;
  cudaPointerAttributes attributes{};
  if (OK(cudaPointerGetAttributes(&attributes, words))) {
    EXPECT(attributes.type == cudaMemoryTypeManaged);
  }
  // A hint and the range's attribute that reports it.
  cudaMemLocation on_device{};
  on_device.type = cudaMemLocationTypeDevice;
  on_device.id = 0;
  SHOW(cudaMemAdvise(words, kBytes, cudaMemAdviseSetReadMostly, on_device));
  int read_mostly = -1;
  if (OK(cudaMemRangeGetAttribute(&read_mostly, sizeof read_mostly, cudaMemRangeAttributeReadMostly,
                                  words, kBytes))) {
    EXPECT(read_mostly == 1);
  }
  SHOW(cudaMemAdvise(words, kBytes, cudaMemAdviseUnsetReadMostly, on_device));
  cudaStream_t stream = nullptr;
  SHOW(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const unsigned blocks = static_cast<unsigned>((kWords + kThreads - 1) / kThreads);
  size_t wrong_after_kernel = 0;
  for (int round = 0; round < kRounds; ++round) {
    const uint32_t base = static_cast<uint32_t>(round) * 7919u;
    for (size_t i = 0; i < kWords; ++i) words[i] = base ^ static_cast<uint32_t>(i);
    add_index<<<blocks, kThreads, 0, stream>>>(words, kWords, static_cast<uint32_t>(round));
    if (cudaStreamSynchronize(stream) != cudaSuccess) break;
    for (size_t i = 0; i < kWords; ++i) {
      const uint32_t expected = (base ^ static_cast<uint32_t>(i)) + static_cast<uint32_t>(i) +
                                static_cast<uint32_t>(round);
      wrong_after_kernel += words[i] != expected;
    }
  }
  SHOW(cudaGetLastError());
  std::printf("rounds: %d\n", kRounds);
  EXPECT(wrong_after_kernel == 0);
  // A memset on the device, read on the host after synchronising.
  SHOW(cudaMemset(words, 0x5a, kBytes));
  SHOW(cudaDeviceSynchronize());
  EXPECT(words[0] == 0x5a5a5a5au && words[kWords - 1] == 0x5a5a5a5au);
  // Host writes, then the device copies them out (into memory of its own) and back to the host.
  for (size_t i = 0; i < kWords; i += 4096) words[i] = static_cast<uint32_t>(i);
  uint32_t* device = nullptr;
  std::vector<uint32_t> back(kWords);
  if (OK(cudaMalloc(&device, kBytes))) {
    SHOW(cudaMemcpy(device, words, kBytes, cudaMemcpyDefault));
    SHOW(cudaMemcpy(back.data(), device, kBytes, cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < kWords; i += 4096) wrong += back[i] != static_cast<uint32_t>(i);
    EXPECT(wrong == 0 && back[1] == 0x5a5a5a5au);
    // Into managed memory from the host: the host reads it back at once.
    std::vector<uint32_t> ones(kWords, 1u);
    SHOW(cudaMemcpy(words, ones.data(), kBytes, cudaMemcpyHostToDevice));
    EXPECT(words[0] == 1u && words[kWords - 1] == 1u);
    SHOW(cudaFree(device));
  }
  SHOW(cudaStreamDestroy(stream));
  SHOW(cudaFree(words));
  return 0;
}

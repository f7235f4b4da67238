// Managed memory through the driver API, printed: 64 MiB allocated managed, then rounds that
// alternate the host writing every word and the device (on the backend) reading all of it and
// writing all of it. The device's read is a copy on the backend out of the managed memory into an
// allocation of its own, brought back here: it shows the host's writes reached the backend. The
// device's write is a memset on a stream; after the stream is synchronised the host reads every
// word: it shows the device's writes reached the host. Then a partial touch (the host reads 1 MiB
// of what the device wrote: only that much should travel), the pointer's attributes, and the free.
// On the simulated device the memsets and copies are the backend's own, as a kernel's writes
// would be; on a GPU the same holds.
//   driver_managed_memory [ROUNDS [explicit]]
// "explicit" runs the same rounds with the host's copy in a buffer of its own moved by explicit
// copies (cuMemcpyHtoD after the host's writes, cuMemcpyDtoH before its reads): the baseline of
// bench/managed/run.sh. Either way, given ROUNDS, the rounds' time is printed (rounds_seconds=).
#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "show_calls.h"

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 4;
  const bool explicit_copies = argc > 2 && std::string(argv[2]) == "explicit";
  CUdevice device = 0;
  show_primary_context(device);
  constexpr size_t kBytes = size_t{64} << 20;
  constexpr size_t kWords = kBytes / sizeof(uint32_t);
  CUdeviceptr managed = 0, check = 0;
  std::vector<uint32_t> own(explicit_copies ? kWords : 0);
  if (explicit_copies) {
    SHOW(cuMemAlloc(&managed, kBytes));
  } else {
    SHOW(cuMemAllocManaged(&managed, kBytes, CU_MEM_ATTACH_GLOBAL));
  }
  SHOW(cuMemAlloc(&check, kBytes));
  unsigned is_managed = 0;
  SHOW(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed));
  std::printf("managed: %s\n", is_managed != 0 ? "yes" : "no");
  CUstream stream = nullptr;
  SHOW(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  // Hints reach the backend's driver; memory that is not the session's is refused.
  if (!explicit_copies) {
    CUmemLocation on_device{};
    on_device.type = CU_MEM_LOCATION_TYPE_DEVICE;
    on_device.id = device;
    SHOW(cuMemAdvise(managed, kBytes, CU_MEM_ADVISE_SET_READ_MOSTLY, on_device));
    SHOW(cuMemPrefetchAsync(managed, kBytes, on_device, 0, stream));
    SHOW(cuMemPrefetchAsync(managed + kBytes, 4096, on_device, 0, stream));
    SHOW(cuStreamSynchronize(stream));
    // The hints as the driver reports them: read mostly, prefetched to the device.
    int read_mostly = -1, last_prefetch = -3;
    SHOW(cuMemRangeGetAttribute(&read_mostly, sizeof read_mostly,
                                CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, kBytes));
    void* values[] = {&read_mostly, &last_prefetch};
    size_t sizes[] = {sizeof read_mostly, sizeof last_prefetch};
    CUmem_range_attribute asked[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                                     CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
    SHOW(cuMemRangeGetAttributes(values, sizes, asked, 2, managed, kBytes));
    std::printf("read mostly %d, last prefetched to device %d\n", read_mostly, last_prefetch);
    SHOW(cuMemRangeGetAttribute(&read_mostly, sizeof read_mostly,
                                CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed + kBytes, 4096));
    SHOW(cuStreamAttachMemAsync(stream, managed, 0, CU_MEM_ATTACH_GLOBAL));
    SHOW(cuStreamSynchronize(stream));
  }
  auto* words = explicit_copies ? own.data() : reinterpret_cast<volatile uint32_t*>(managed);
  std::vector<uint32_t> back(kWords);
  size_t host_to_device_wrong = 0, device_to_host_wrong = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < rounds; ++round) {
    const uint32_t base = static_cast<uint32_t>(round) * 1000003u;
    for (size_t i = 0; i < kWords; ++i) words[i] = base + static_cast<uint32_t>(i);
    if (explicit_copies && cuMemcpyHtoD(managed, own.data(), kBytes) != CUDA_SUCCESS) return 1;
    // The device reads it: a copy on the backend, then its bytes brought here.
    if (cuMemcpyDtoD(check, managed, kBytes) != CUDA_SUCCESS ||
        cuMemcpyDtoH(back.data(), check, kBytes) != CUDA_SUCCESS) {
      std::printf("round %d: copies failed\n", round);
      return 1;
    }
    for (size_t i = 0; i < kWords; ++i) host_to_device_wrong += back[i] != base + i;
    // The device writes it; the host reads it after synchronising.
    const uint32_t fill = 0xa0000000u + static_cast<uint32_t>(round);
    if (cuMemsetD32Async(managed, fill, kWords, stream) != CUDA_SUCCESS ||
        cuStreamSynchronize(stream) != CUDA_SUCCESS) {
      std::printf("round %d: memset failed\n", round);
      return 1;
    }
    if (explicit_copies && cuMemcpyDtoH(own.data(), managed, kBytes) != CUDA_SUCCESS) return 1;
    for (size_t i = 0; i < kWords; ++i) device_to_host_wrong += words[i] != fill;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Only for the bench (which names ROUNDS): a time would make two runs' outputs differ.
  if (argc > 1) std::printf("rounds_seconds=%.3f\n", seconds);
  std::printf(
      "rounds: %d, host writes wrong on the device: %zu, device writes wrong on the host: "
      "%zu\n",
      rounds, host_to_device_wrong, device_to_host_wrong);
  if (explicit_copies) {
    SHOW(cuMemFree(managed));
    return 0;
  }
  // A partial touch: the device writes all of it, the host reads the first MiB.
  SHOW(cuMemsetD32(managed, 7, kWords));
  SHOW(cuCtxSynchronize());
  size_t partial_wrong = 0;
  for (size_t i = 0; i < (size_t{1} << 20) / sizeof(uint32_t); ++i) partial_wrong += words[i] != 7;
  std::printf("partial read wrong: %zu\n", partial_wrong);
  SHOW(cuStreamDestroy(stream));
  SHOW(cuMemFree(check));
  SHOW(cuMemFree(managed));
  return 0;
}

// Batches of managed memory prefetches and discards through the driver's own forms (cuda rows
// 285-287), each call printed with its result for the test to find (simulated_mode_test.cpp):
//  - a prefetch batch of three ranges in two regions, to two locations (the device for the first
//    two, the host for the third), which the ranges' last prefetch locations then report;
//  - refusals at once, as the driver's: a range of device memory that is not managed, a range past
//    its region, reserved flags, locations whose indexes do not start at 0 or do not rise;
//  - a discard batch: the host, which wrote the range before, reads the device's bytes after it
//    (indeterminate by the driver's word; the simulated device fills them with 0xdd), never its
//    own stale copy; a discard-and-prefetch batch does both.
#include <cuda.h>

#include <cstdio>
#include <cstring>

#include "show_calls.h"

namespace {

constexpr size_t kBytes = 1 << 20;

// The last prefetch location of `address`'s range as the driver reports it (a device ordinal, or
// CU_DEVICE_CPU: -1).
int last_prefetch(CUdeviceptr address, size_t bytes) {
  int location = -2;
  SHOW(cuMemRangeGetAttribute(&location, sizeof location,
                              CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, address, bytes));
  return location;
}

// Whether every byte of `bytes` at `address`, read by the host, is `value`.
bool all(CUdeviceptr address, size_t bytes, unsigned char value) {
  const auto* host = reinterpret_cast<const unsigned char*>(address);
  for (size_t i = 0; i < bytes; ++i) {
    if (host[i] != value) return false;
  }
  return true;
}

}  // namespace

int main() {
  CUdevice device = 0;
  show_primary_context(device);
  CUstream stream = nullptr;
  SHOW(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr a = 0, b = 0, plain = 0;
  SHOW(cuMemAllocManaged(&a, kBytes, CU_MEM_ATTACH_GLOBAL));
  SHOW(cuMemAllocManaged(&b, kBytes, CU_MEM_ATTACH_GLOBAL));
  SHOW(cuMemAlloc(&plain, kBytes));
  std::memset(reinterpret_cast<void*>(a), 1, kBytes);
  std::memset(reinterpret_cast<void*>(b), 2, kBytes);

  CUdeviceptr ranges[] = {a, b, b + kBytes / 2};
  size_t sizes[] = {kBytes, kBytes / 2, 4096};
  CUmemLocation locations[2] = {};
  locations[0].type = CU_MEM_LOCATION_TYPE_DEVICE;
  locations[0].id = device;
  locations[1].type = CU_MEM_LOCATION_TYPE_HOST;
  size_t firsts[] = {0, 2};
  SHOW(cuMemPrefetchBatchAsync(ranges, sizes, 3, locations, firsts, 2, 0, stream));
  SHOW(cuStreamSynchronize(stream));
  std::printf("last prefetch: a %d, b %d, b's second half %d\n", last_prefetch(a, kBytes),
              last_prefetch(b, 4096), last_prefetch(b + kBytes / 2, 4096));
  std::printf("host bytes kept through the prefetch: %s\n",
              all(a, kBytes, 1) && all(b, kBytes, 2) ? "yes" : "no");

  // Refused at once, as the driver refuses them.
  CUdeviceptr not_managed[] = {plain};
  SHOW(cuMemPrefetchBatchAsync(not_managed, sizes, 1, locations, firsts, 1, 0, stream));
  CUdeviceptr past[] = {a + kBytes - 64};
  size_t past_sizes[] = {128};
  SHOW(cuMemDiscardBatchAsync(past, past_sizes, 1, 0, stream));
  SHOW(cuMemDiscardBatchAsync(ranges, sizes, 1, 1, stream));
  size_t from_one[] = {1, 2};
  SHOW(cuMemPrefetchBatchAsync(ranges, sizes, 3, locations, from_one, 2, 0, stream));
  size_t not_rising[] = {0, 0};
  SHOW(cuMemPrefetchBatchAsync(ranges, sizes, 3, locations, not_rising, 2, 0, stream));
  SHOW(cuMemPrefetchBatchAsync(ranges, sizes, 3, locations, firsts, 0, 0, stream));
  SHOW(cuStreamSynchronize(stream));
  std::printf("host bytes kept through the refusals: %s\n",
              all(a, kBytes, 1) && all(b, kBytes, 2) ? "yes" : "no");

  // A discard: the host reads what the device holds, not its own copy.
  std::memset(reinterpret_cast<void*>(a), 3, kBytes);
  SHOW(cuMemDiscardBatchAsync(ranges, sizes, 1, 0, stream));
  SHOW(cuStreamSynchronize(stream));
  std::printf("after the discard the host reads the device's bytes: %s\n",
              all(a, kBytes, 0xdd) ? "yes" : "no");
  CUdeviceptr second_half[] = {b + kBytes / 2};
  size_t half[] = {kBytes / 2};
  SHOW(cuMemDiscardAndPrefetchBatchAsync(second_half, half, 1, locations, firsts, 1, 0, stream));
  SHOW(cuStreamSynchronize(stream));
  std::printf(
      "discard and prefetch: discarded half read as the device's %s, other half kept %s, "
      "last prefetch %d\n",
      all(b + kBytes / 2, kBytes / 2, 0xdd) ? "yes" : "no", all(b, kBytes / 2, 2) ? "yes" : "no",
      last_prefetch(b + kBytes / 2, 4096));

  SHOW(cuMemFree(a));
  SHOW(cuMemFree(b));
  SHOW(cuMemFree(plain));
  SHOW(cuStreamDestroy(stream));
  return 0;
}

// Managed variables (__managed__): the host and the device share each at one address. The
// variables are packed side by side, as the driver places them - several share a page, and a
// large one spans many - and each is checked on both sides of the boundary: the device sees what
// the host wrote (a copy out of it returns the host's values), the host sees what the device
// wrote (a copy into it, a memset, a kernel) once it has synchronised, and an initial value given
// in the source is there before anything writes. Without a device the variables are not touched
// (natively their addresses are never set).
#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.h"

constexpr uint32_t kCounters = 1024;
constexpr size_t kBigBytes = size_t{3} << 20;

__managed__ uint32_t counters[kCounters];
__managed__ float scale = 2.5f;
__managed__ uint64_t tag;
__managed__ uint8_t big[kBigBytes];

__global__ void bump(uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) counters[i] += i + static_cast<uint32_t>(scale);
  if (i == 0) tag = 0xfeedull;
}

int main() {
  int devices = 0;
  if (!OK(cudaGetDeviceCount(&devices)) || devices == 0) return 0;
  // The initial value, before anything wrote it.
  EXPECT(scale == 2.5f);

  // The host's writes reach the device: a copy out of the variable returns them.
  for (uint32_t i = 0; i < kCounters; ++i) counters[i] = i * 7u;
  tag = 0x1234ull;
  std::vector<uint32_t> back(kCounters);
  SHOW(cudaMemcpy(back.data(), counters, sizeof counters, cudaMemcpyDefault));
  bool same = true;
  for (uint32_t i = 0; i < kCounters; ++i) same = same && back[i] == i * 7u;
  EXPECT(same);
  uint64_t tag_back = 0;
  SHOW(cudaMemcpy(&tag_back, &tag, sizeof tag, cudaMemcpyDefault));
  EXPECT(tag_back == 0x1234ull);

  // The device's writes reach the host: a copy into the variable, read at once.
  std::vector<uint32_t> thrice(kCounters);
  for (uint32_t i = 0; i < kCounters; ++i) thrice[i] = i * 3u;
  SHOW(cudaMemcpy(counters, thrice.data(), sizeof counters, cudaMemcpyDefault));
  same = true;
  for (uint32_t i = 0; i < kCounters; ++i) same = same && counters[i] == i * 3u;
  EXPECT(same);

  // A variable of many pages: the host's pattern out, a memset in.
  for (size_t i = 0; i < kBigBytes; ++i) big[i] = static_cast<uint8_t>(i * 13u);
  std::vector<uint8_t> big_back(kBigBytes);
  SHOW(cudaMemcpy(big_back.data(), big, kBigBytes, cudaMemcpyDefault));
  same = true;
  for (size_t i = 0; i < kBigBytes; ++i)
    same = same && big_back[i] == static_cast<uint8_t>(i * 13u);
  EXPECT(same);
  SHOW(cudaMemset(big, 0x7e, kBigBytes));
  SHOW(cudaDeviceSynchronize());
  EXPECT(big[0] == 0x7e && big[kBigBytes / 2] == 0x7e && big[kBigBytes - 1] == 0x7e);

  // A kernel reads and writes them; the host sees its writes after synchronising.
  bump<<<kCounters / 256, 256>>>(kCounters);
  SHOW(cudaDeviceSynchronize());
  same = true;
  for (uint32_t i = 0; i < kCounters; ++i) same = same && counters[i] == i * 3u + i + 2u;
  EXPECT(same);
  EXPECT(tag == 0xfeedull);
  std::printf("done\n");
  return 0;
}

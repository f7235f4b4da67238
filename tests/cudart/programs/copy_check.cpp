// A CUDA application for the copy tests (copy_bytes_test.cpp), run through gvirtus-run against a
// backend whose device keeps what is copied to it (bench/copy/accepting_device.cpp in "keep"
// mode). It checks every byte of host-to-device-to-host round trips:
//   - sizes around every threshold of the copy path: tiny, the 256 KiB staging minimum, the 8 MiB
//     staging block, the 16 MiB chunk, several chunks with a ragged end;
//   - host and device addresses off any alignment;
//   - pageable (malloc) and pinned (cudaMallocHost) host memory;
//   - cudaMemcpy, and cudaMemcpyAsync followed by cudaStreamSynchronize;
//   - the bytes next to the destination are never written;
//   - a source buffer overwritten right after a host-to-device copy returns: the device holds the
//     old contents (a synchronous copy, and an asynchronous one from pageable memory, have read
//     the source by then, as CUDA promises).
// Prints "ok: N round trips checked" and exits 0, or names the first failure and exits 1.
// --max-bytes N leaves out the larger sizes.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGuard = 64;  // bytes checked untouched on each side of a destination

// Host memory of one kind, with room for offsets and guards.
class HostBuffer {
 public:
  HostBuffer(size_t bytes, bool pinned) : bytes_(bytes), pinned_(pinned) {
    if (pinned) {
      if (cudaMallocHost(reinterpret_cast<void**>(&data_), bytes) != cudaSuccess) data_ = nullptr;
    } else {
      data_ = static_cast<unsigned char*>(std::malloc(bytes));
    }
  }
  ~HostBuffer() {
    if (pinned_) {
      cudaFreeHost(data_);
    } else {
      std::free(data_);
    }
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  unsigned char* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  size_t bytes_;
  bool pinned_;
  unsigned char* data_ = nullptr;
};

void fill(unsigned char* at, size_t bytes, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < bytes; ++i) {
    x = x * 1664525u + 1013904223u;
    at[i] = static_cast<unsigned char>(x >> 24);
  }
}

bool matches(const unsigned char* at, size_t bytes, uint32_t seed, size_t* first_wrong) {
  std::vector<unsigned char> expected(bytes);
  fill(expected.data(), bytes, seed);
  for (size_t i = 0; i < bytes; ++i) {
    if (at[i] != expected[i]) {
      *first_wrong = i;
      return false;
    }
  }
  return true;
}

struct Case {
  size_t bytes;
  size_t host_offset;
  size_t device_offset;
  bool pinned;
  bool async;
};

int failures = 0;

void fail(const Case& c, const char* what, size_t detail = 0) {
  std::printf("FAIL %zu bytes, host +%zu, device +%zu, %s, %s: %s (%zu)\n", c.bytes, c.host_offset,
              c.device_offset, c.pinned ? "pinned" : "pageable",
              c.async ? "cudaMemcpyAsync" : "cudaMemcpy", what, detail);
  ++failures;
}

cudaError_t copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, bool async) {
  if (!async) return cudaMemcpy(dst, src, bytes, kind);
  const cudaError_t rc = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
  return rc != cudaSuccess ? rc : cudaStreamSynchronize(nullptr);
}

// One round trip of case `c` through `device`; `seed` makes each trip's bytes its own.
void round_trip(const Case& c, unsigned char* device, uint32_t seed) {
  HostBuffer src(c.bytes + c.host_offset + 1, c.pinned);
  HostBuffer dst(c.bytes + c.host_offset + 2 * kGuard, c.pinned);
  if (src.data() == nullptr || dst.data() == nullptr) return fail(c, "no host memory");
  unsigned char* from = src.data() + c.host_offset;
  unsigned char* to = dst.data() + kGuard + c.host_offset % kGuard;
  fill(from, c.bytes, seed);
  if (copy(device + c.device_offset, from, c.bytes, cudaMemcpyHostToDevice, c.async) !=
      cudaSuccess) {
    return fail(c, "host to device failed");
  }
  // Overwritten at once: what reached the device must be what was there before.
  fill(from, c.bytes, seed + 1);
  std::memset(dst.data(), 0xee, dst.size());
  if (copy(to, device + c.device_offset, c.bytes, cudaMemcpyDeviceToHost, c.async) != cudaSuccess) {
    return fail(c, "device to host failed");
  }
  size_t wrong = 0;
  if (!matches(to, c.bytes, seed, &wrong)) return fail(c, "wrong byte at offset", wrong);
  for (const unsigned char* p = dst.data(); p < to; ++p) {
    if (*p != 0xee) return fail(c, "written before the destination", to - p);
  }
  for (const unsigned char* p = to + c.bytes; p < dst.data() + dst.size(); ++p) {
    if (*p != 0xee) return fail(c, "written after the destination", p - (to + c.bytes));
  }
}

}  // namespace

int main(int argc, char** argv) {
  // --max-bytes N: only sizes up to N (the VM harness, whose emulated CPU is slow).
  size_t max_bytes = SIZE_MAX;
  if (argc == 3 && std::strcmp(argv[1], "--max-bytes") == 0) {
    max_bytes = std::strtoull(argv[2], nullptr, 10);
  } else if (argc != 1) {
    std::printf("usage: copy_check [--max-bytes N]\n");
    return 2;
  }
  const size_t sizes[] = {1,
                          3,
                          4095,
                          4097,
                          64 * kKiB + 1,
                          256 * kKiB - 1,
                          256 * kKiB,
                          256 * kKiB + 5,
                          8 * kMiB - 3,
                          8 * kMiB + 3,
                          16 * kMiB - 1,
                          16 * kMiB,
                          16 * kMiB + 1,
                          3 * 16 * kMiB + 4099};
  const size_t largest = 3 * 16 * kMiB + 4099;
  void* device = nullptr;
  if (cudaMalloc(&device, largest + 4096) != cudaSuccess) {
    std::printf("FAIL cudaMalloc\n");
    return 1;
  }
  int trips = 0;
  uint32_t seed = 1;
  for (size_t bytes : sizes) {
    if (bytes > max_bytes) continue;
    for (const bool pinned : {false, true}) {
      for (const bool async : {false, true}) {
        // Aligned, then host and device both off alignment.
        round_trip(Case{bytes, 0, 0, pinned, async}, static_cast<unsigned char*>(device), seed++);
        round_trip(Case{bytes, 7, 13, pinned, async}, static_cast<unsigned char*>(device), seed++);
        trips += 2;
      }
    }
  }
  cudaFree(device);
  if (failures != 0) {
    std::printf("%d of %d round trips failed\n", failures, trips);
    return 1;
  }
  std::printf("ok: %d round trips checked\n", trips);
  return 0;
}

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
//     the source by then, as CUDA promises);
//   - cudaMemcpyBatchAsync: host to device under two attributes (stream order, and "during the
//     call", whose sources are overwritten as soon as it returns), then device to device and device
//     to host in a second batch; a batch whose attributes do not start at copy 0 is refused;
//   - cudaMemcpy3DBatchAsync: a box out of a wider host buffer to device memory and back into
//     another layout, the padding untouched; six malformed batches refused.
// Prints "ok: N round trips checked" and exits 0, or names the first failure and exits 1.
// --max-bytes N leaves out the larger sizes.
#include <cuda_runtime_api.h>

#include <algorithm>
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

// One batch round trip through `device` (at least 24 MiB + 4099 bytes): three sources, pageable,
// pinned and pageable, to the device in one batch; then, in a second, the first copied on the
// device and all three back to host memory; the device-to-device copy's bytes read back last.
void batch_round_trip(unsigned char* device, size_t max_bytes, uint32_t seed) {
  const Case c{0, 0, 0, false, true};
  const size_t sizes[] = {4099, 256 * kKiB + 5, std::min<size_t>(16 * kMiB + 1, max_bytes)};
  unsigned char* const on_device[] = {device, device + 8 * kKiB, device + kMiB};
  unsigned char* const copied = device + 24 * kMiB;
  HostBuffer src0(sizes[0], false), src1(sizes[1], true), src2(sizes[2], false);
  HostBuffer back0(sizes[0], true), back1(sizes[1], false), back2(sizes[2], true);
  HostBuffer back3(sizes[0], false);
  for (const HostBuffer* b : {&src0, &src1, &src2, &back0, &back1, &back2, &back3}) {
    if (b->data() == nullptr) return fail(c, "batch: no host memory");
  }
  const HostBuffer* sources[] = {&src0, &src1, &src2};
  for (int i = 0; i < 3; ++i) fill(sources[i]->data(), sizes[i], seed + i);
  void* to_device[] = {on_device[0], on_device[1], on_device[2]};
  const void* from_host[] = {src0.data(), src1.data(), src2.data()};
  cudaMemcpyAttributes attrs[2] = {};
  attrs[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attrs[1].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
  size_t first_copy[] = {0, 1};
  // Refused before anything travels, as the runtime vets a batch: no copies, a missing array,
  // attributes that do not start at copy 0, do not rise, run past the batch, outnumber the copies
  // or name an unknown source order or flag, and the legacy default stream.
  cudaMemcpyAttributes unknown_order[2] = {attrs[0], attrs[1]};
  unknown_order[1].srcAccessOrder = cudaMemcpySrcAccessOrderInvalid;
  cudaMemcpyAttributes unknown_flag[2] = {attrs[0], attrs[1]};
  unknown_flag[0].flags = 0x80;
  size_t from_1[] = {1, 2}, falling[] = {0, 0}, past[] = {0, 3}, three[] = {0, 1, 2};
  cudaMemcpyAttributes three_attrs[3] = {attrs[0], attrs[0], attrs[0]};
  struct Malformed {
    const char* what;
    cudaError_t rc;
  } const malformed[] = {
      {"no copies", cudaMemcpyBatchAsync(to_device, from_host, sizes, 0, attrs, first_copy, 2,
                                         cudaStreamPerThread)},
      {"no sources", cudaMemcpyBatchAsync(to_device, nullptr, sizes, 3, attrs, first_copy, 2,
                                          cudaStreamPerThread)},
      {"no attributes", cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, nullptr, first_copy, 2,
                                             cudaStreamPerThread)},
      {"zero attributes", cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, attrs, first_copy, 0,
                                               cudaStreamPerThread)},
      {"first attribute past copy 0",
       cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, attrs, from_1, 2, cudaStreamPerThread)},
      {"attributes not rising", cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, attrs, falling,
                                                     2, cudaStreamPerThread)},
      {"attribute past the batch",
       cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, attrs, past, 2, cudaStreamPerThread)},
      {"more attributes than copies",
       cudaMemcpyBatchAsync(to_device, from_host, sizes, 2, three_attrs, three, 3,
                            cudaStreamPerThread)},
      {"unknown source order", cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, unknown_order,
                                                    first_copy, 2, cudaStreamPerThread)},
      {"unknown flag", cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, unknown_flag,
                                            first_copy, 2, cudaStreamPerThread)},
      {"legacy stream", cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, attrs, first_copy, 2,
                                             cudaStreamLegacy)},
  };
  for (const Malformed& m : malformed) {
    if (m.rc != cudaErrorInvalidValue) return fail(c, m.what, m.rc);
  }
  if (const cudaError_t rc = cudaMemcpyBatchAsync(to_device, from_host, sizes, 3, attrs, first_copy,
                                                  2, cudaStreamPerThread);
      rc != cudaSuccess) {
    return fail(c, "batch: host to device failed with error", rc);
  }
  // Read during the call, as its attribute says: these may change now.
  fill(src1.data(), sizes[1], seed + 100);
  fill(src2.data(), sizes[2], seed + 100);
  void* to_host[] = {copied, back0.data(), back1.data(), back2.data()};
  const void* from_device[] = {on_device[0], on_device[0], on_device[1], on_device[2]};
  const size_t back_sizes[] = {sizes[0], sizes[0], sizes[1], sizes[2]};
  size_t all[] = {0};
  if (cudaMemcpyBatchAsync(to_host, from_device, back_sizes, 4, attrs, all, 1,
                           cudaStreamPerThread) != cudaSuccess ||
      cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess) {
    return fail(c, "batch: device to device and to host failed");
  }
  if (cudaMemcpy(back3.data(), copied, sizes[0], cudaMemcpyDeviceToHost) != cudaSuccess) {
    return fail(c, "batch: reading the device-to-device copy failed");
  }
  const HostBuffer* backs[] = {&back0, &back1, &back2, &back3};
  const uint32_t seeds[] = {seed, seed + 1, seed + 2, seed};
  for (int i = 0; i < 4; ++i) {
    size_t wrong = 0;
    if (!matches(backs[i]->data(), i == 3 ? sizes[0] : sizes[i], seeds[i], &wrong)) {
      return fail(c,
                  i == 3 ? "batch: wrong byte in the device-to-device copy at offset"
                         : "batch: wrong byte back from the device at offset",
                  wrong);
    }
  }
}

// A batch of 3D copies (cudaMemcpy3DBatchAsync) between pointers: a box of 100 x 7 x 3 bytes
// out of a wider host buffer (rows of 128, layers of 9) into packed device memory, and back into
// a host buffer of another layout (rows of 112, layers of 8); every byte of the box comes back
// where it belongs and the padding around it is never written. Malformed batches are refused.
void batch_3d_round_trip(unsigned char* device, uint32_t seed) {
  const Case c{100 * 7 * 3, 0, 0, false, true};
  constexpr size_t kW = 100, kH = 7, kD = 3;
  std::vector<unsigned char> from(128 * 9 * kD), back(112 * 8 * kD, 0xee);
  fill(from.data(), from.size(), seed);
  cudaMemcpy3DBatchOp ops[2] = {};
  ops[0].src.type = cudaMemcpyOperandTypePointer;
  ops[0].src.op.ptr.ptr = from.data();
  ops[0].src.op.ptr.rowLength = 128;
  ops[0].src.op.ptr.layerHeight = 9;
  ops[0].dst.type = cudaMemcpyOperandTypePointer;
  ops[0].dst.op.ptr.ptr = device;
  ops[0].extent = {kW, kH, kD};
  ops[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  ops[1] = ops[0];
  ops[1].src.op.ptr = {device, 0, 0, {}};
  ops[1].dst.op.ptr = {back.data(), 112, 8, {}};
  const struct {
    const char* what;
    cudaMemcpy3DBatchOp op;
    unsigned long long flags;
    cudaStream_t stream;
  } refused[] = {
      {"no extent",
       [&] {
         auto o = ops[0];
         o.extent.depth = 0;
         return o;
       }(),
       0, cudaStreamPerThread},
      {"rows shorter than the extent",
       [&] {
         auto o = ops[0];
         o.src.op.ptr.rowLength = 99;
         return o;
       }(),
       0, cudaStreamPerThread},
      {"an unknown operand",
       [&] {
         auto o = ops[0];
         o.dst.type = cudaMemcpy3DOperandType(7);
         return o;
       }(),
       0, cudaStreamPerThread},
      {"an unknown source order",
       [&] {
         auto o = ops[0];
         o.srcAccessOrder = cudaMemcpySrcAccessOrder(9);
         return o;
       }(),
       0, cudaStreamPerThread},
      {"batch flags", ops[0], 1, cudaStreamPerThread},
      {"the legacy stream", ops[0], 0, cudaStreamLegacy},
  };
  for (const auto& r : refused) {
    cudaMemcpy3DBatchOp op = r.op;
    if (cudaMemcpy3DBatchAsync(1, &op, r.flags, r.stream) != cudaErrorInvalidValue) {
      return fail(c, r.what);
    }
  }
  if (cudaMemcpy3DBatchAsync(1, &ops[0], 0, cudaStreamPerThread) != cudaSuccess ||
      cudaMemcpy3DBatchAsync(1, &ops[1], 0, cudaStreamPerThread) != cudaSuccess ||
      cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess) {
    return fail(c, "3D batch: the copies failed");
  }
  for (size_t z = 0; z < kD; ++z) {
    for (size_t y = 0; y < 8; ++y) {
      for (size_t x = 0; x < 112; ++x) {
        const unsigned char got = back[(z * 8 + y) * 112 + x];
        if (y < kH && x < kW) {
          if (got != from[(z * 9 + y) * 128 + x]) return fail(c, "3D batch: wrong byte", x);
        } else if (got != 0xee) {
          return fail(c, "3D batch: padding written", x);
        }
      }
    }
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
  batch_round_trip(static_cast<unsigned char*>(device), max_bytes, seed);
  batch_3d_round_trip(static_cast<unsigned char*>(device), seed + 7);
  trips += 2;
  cudaFree(device);
  if (failures != 0) {
    std::printf("%d of %d round trips failed\n", failures, trips);
    return 1;
  }
  std::printf("ok: %d round trips checked\n", trips);
  return 0;
}

// Pinned staging for synchronous copies of ordinary (pageable) client memory over a transport
// that shares memory with the backend (shm's arena), shared by both stubs (pinned_staging.cpp).
// Instead of streaming the bytes through the ring, into the backend's receive buffer and through
// the library's own staging copy, a stub copies them through two page-locked blocks of the arena,
// which the backend's library reads or fills with the GPU's DMA: while the backend copies one
// block, the stub fills or empties the other.
//
// A small pool of block pairs serves all threads; a copy that finds none free (or an arena too
// small, or a transport that shares nothing) takes the ordinary path.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>

namespace gvirtus::staging {

// How a stub places pinned blocks in the session's shared memory.
struct PinnedHooks {
  const void* (*arena)();                // the session's shared memory (its identity), or null
  std::byte* (*allocate)(size_t bytes);  // a block of it registered with the backend, or null
  void (*release)(std::byte* block);     // gives an allocated block back
  std::optional<uint64_t> (*offset)(const void* block, size_t bytes);  // its place there
};

class PinnedPool {
 public:
  static constexpr size_t kBlockBytes = size_t{8} << 20;
  static constexpr int kMaxPairs = 4;  // at most this many copies at once; 16 MiB pinned each

  explicit PinnedPool(PinnedHooks hooks) : hooks_(hooks) {}

  // A pair of blocks held for one copy; empty when none is to be had.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept : pool_(other.pool_), pair_(other.pair_) { other.pair_ = -1; }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    explicit operator bool() const { return pair_ >= 0; }
    std::byte* block(int i) const;
    uint64_t offset(int i) const;  // in the shared memory

   private:
    friend class PinnedPool;
    Lease(PinnedPool* pool, int pair) : pool_(pool), pair_(pair) {}
    PinnedPool* pool_ = nullptr;
    int pair_ = -1;
  };

  // A free pair of the current session's (made on first need), or an empty lease.
  Lease lease();

 private:
  struct Pair {
    std::array<std::byte*, 2> blocks{};
    std::array<uint64_t, 2> offsets{};
    bool busy = false;
  };

  PinnedHooks hooks_;
  std::mutex mutex_;
  const void* arena_ = nullptr;  // the arena the pairs live in
  std::array<Pair, kMaxPairs> pairs_{};
  int made_ = 0;
  bool gave_up_ = false;  // making a pair failed in this arena: do not try again
};

// A synchronous copy of `count` bytes between the device and `host` through `lease`'s blocks,
// double-buffered: `begin(b, at, bytes)` sends the shared copy of the copy's bytes [at, at +
// bytes) between the device and block b and gives what `finish` takes to wait for its result (the
// library's status, 0: success). To the device, a block is filled again once the chunk that used
// it is done; from it, two chunks are ahead and a block is emptied once its chunk is done. What is
// still in flight after a failure is waited for, oldest first, before the lease may go back (the
// backend no longer touches the blocks then). The first failure is the answer.
template <typename Pending, typename Begin, typename Finish>
int copy_through(const PinnedPool::Lease& lease, std::byte* host, size_t count, bool to_device,
                 Begin&& begin, Finish&& finish) {
  constexpr size_t kBlock = PinnedPool::kBlockBytes;
  const size_t chunks = (count + kBlock - 1) / kBlock;
  auto bytes_of = [&](size_t k) { return std::min(kBlock, count - k * kBlock); };
  struct InFlight {
    size_t chunk;
    Pending pending;
  };
  std::optional<InFlight> in_flight[2];  // chunk k uses block k % 2
  int first_failure = 0;
  auto send = [&](size_t k) {
    const int b = static_cast<int>(k % 2);
    if (to_device) std::memcpy(lease.block(b), host + k * kBlock, bytes_of(k));
    in_flight[b] = InFlight{k, begin(b, k * kBlock, bytes_of(k))};
  };
  auto land = [&](int b) {
    const size_t k = in_flight[b]->chunk;
    const int status = finish(in_flight[b]->pending);
    in_flight[b].reset();
    if (first_failure != 0) return;
    first_failure = status;
    if (status == 0 && !to_device) std::memcpy(host + k * kBlock, lease.block(b), bytes_of(k));
  };
  if (to_device) {
    for (size_t k = 0; k < chunks && first_failure == 0; ++k) {
      if (in_flight[k % 2]) land(static_cast<int>(k % 2));
      if (first_failure == 0) send(k);
    }
  } else {
    for (size_t k = 0; k < std::min<size_t>(2, chunks); ++k) send(k);
    for (size_t k = 0; k < chunks && first_failure == 0; ++k) {
      land(static_cast<int>(k % 2));
      if (first_failure == 0 && k + 2 < chunks) send(k + 2);
    }
  }
  while (in_flight[0] || in_flight[1]) {
    const bool zero_first =
        in_flight[0] && (!in_flight[1] || in_flight[0]->chunk < in_flight[1]->chunk);
    land(zero_first ? 0 : 1);
  }
  return first_failure;
}

}  // namespace gvirtus::staging

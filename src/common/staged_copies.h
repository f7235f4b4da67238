// Graph copies of the client's own memory, staged through blocks on the backend: the part both
// stubs share (staged_copies.cpp; the driver stub's frontend/host_staging.h and the runtime stub's
// frontend/host_staging.h make nodes and captures of it; the backend's blocks:
// backend/services/staging_blocks.h). A graph runs on the backend's GPU, which cannot reach this
// process's pageable memory (nor its page-locked memory over a transport without shared memory),
// yet CUDA lets a copy node or a captured copy name it and reads or writes it each time the graph
// runs, when the copy runs. So such a copy becomes a copy of a staging block on the backend beside
// a host function of the stub's, which runs in stream order like any other: before a copy to the
// device it writes the program's bytes into the block, after a copy from the device it reads the
// block into the program's memory. Each range of the program's memory gets one block per backend,
// reused by every node and capture naming it again. A copy with both sides in this process's
// memory needs no block: it is the stub's host function alone, copying here when the graph
// reaches it (HostCopy), as the driver copies between host memory on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

namespace gvirtus::staging {

// The most bytes one staging write or read carries (the backend refuses more).
inline constexpr uint64_t kChunkBytes = uint64_t{16} << 20;

// A copy's side in this process's memory: `rows` rows of `width` bytes, `pitch` bytes apart, in
// `slices` slices `slice` bytes apart, from `first` (the copy's first byte). The block holds the
// same layout from 0.
struct Region {
  std::byte* first;
  uint64_t width, rows, slices, pitch, slice;

  uint64_t span() const { return (slices - 1) * slice + (rows - 1) * pitch + width; }
  bool contiguous() const { return span() == width * rows * slices; }
};

// A side's region from CUDA's description of it (base pointer, position in bytes and rows and
// slices, pitch, rows per slice) and the copy's extent; false for a shape CUDA refuses (rows
// wider than their pitch, slices taller than their height, an empty extent, a null pointer) or
// one past the end of the address space.
bool region_of(const void* base, uint64_t x, uint64_t y, uint64_t z, uint64_t pitch,
               uint64_t height, uint64_t width, uint64_t rows, uint64_t slices, Region& region);

// Which sides of a copy are this process's own memory (nothing the backend's GPU reaches).
struct Sides {
  bool source = false;
  bool destination = false;

  bool any() const { return source || destination; }
  bool both() const { return source && destination; }
  friend bool operator==(const Sides&, const Sides&) = default;
};

// A copy between two regions of this process's memory of one extent (their rows and slices
// apart as each side's pitch says): what the stub's host function does each time the graph
// reaches it.
struct HostCopy {
  Region source, destination;
};
// The host function of a HostCopy (its data): row by row with memmove, as the stubs copy between
// host memory outside graphs. It calls nothing and cannot fail.
void run_host_copy(void* data);

// What the stub's host function does each time the graph reaches it.
struct Transfer {
  Region region;
  uint64_t block;  // the block's device address on the backend
  bool to_device;  // the region into the block (before a copy to the device), or back
  uint32_t route;  // the backend holding the block (the stub's route)
};

// The stub's staging rows, each returning the library's status (0: success). `write` and `read`
// carry at most kChunkBytes.
struct Calls {
  int (*allocate)(uint64_t bytes, uint64_t& block);
  int (*write)(uint64_t at, const std::byte* from, uint64_t bytes);
  int (*read)(uint64_t at, std::byte* to, uint64_t bytes);
};

// The process's blocks and transfers for one stub (never destroyed: exit handlers may still run
// graphs that hold them).
class Staging {
 public:
  explicit Staging(const Calls& calls) : calls_(calls) {}

  // The block on `route` for `region`'s span, allocated the first time: the library's status.
  int block_for(uint32_t route, const Region& region, uint64_t& block);
  // The transfer for `region` and `block` in that direction (one per such combination, kept for
  // the process: graphs hold it as their host function's data).
  const Transfer* transfer_for(const Region& region, uint64_t block, bool to_device,
                               uint32_t route);
  // Moves the bytes (on the route the caller made current): only the copy's own bytes of the
  // program's memory are read or written, row by row when its rows have gaps.
  int run(const Transfer& transfer) const;
  // The host copy between `source` and `destination` (one per such pair, kept for the process:
  // graphs hold it as their host function's data). Both regions have the copy's extent.
  const HostCopy* host_copy_for(const Region& source, const Region& destination);

 private:
  using BlockKey = std::tuple<uint32_t, uintptr_t, uint64_t>;  // route, start, span
  using RegionKey = std::tuple<std::byte*, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>;
  using TransferKey = std::tuple<RegionKey, uint64_t, bool, uint32_t>;  // all a transfer holds
  static RegionKey key_of(const Region& r) {
    return {r.first, r.width, r.rows, r.slices, r.pitch, r.slice};
  }

  Calls calls_;
  std::mutex mutex_;
  std::map<BlockKey, uint64_t> blocks_;
  std::map<TransferKey, std::unique_ptr<Transfer>> transfers_;
  std::map<std::pair<RegionKey, RegionKey>, std::unique_ptr<HostCopy>> host_copies_;
};

}  // namespace gvirtus::staging

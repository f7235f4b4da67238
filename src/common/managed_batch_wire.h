// Batches of managed memory prefetches and discards on the wire, one format for both stubs and
// both plugins: the runtime's cudaMemPrefetchBatchAsync, cudaMemDiscardBatchAsync and
// cudaMemDiscardAndPrefetchBatchAsync (cudart rows 298-300) and the driver's cuMem* forms (cuda
// rows 285-287). A request is
//   u64 stream, u64 flags, u64 count (at most kMaxManagedBatch), count times {u64 address,
//   u64 bytes}, u64 locations (at most count; 0 for a discard), locations times {the library's
//   location struct (cudaMemLocation, CUmemLocation: sizeof bytes), u64 the index of the first
//   range it applies to}.
// Sent ahead; the reply is the i32 result. The stub checks the batch's shape
// (managed_batch_shape_ok) and that every range is managed memory it mirrors; the backend reads
// it here (read_managed_batch, which raises kInvalidInput on a malformed one: the session ends)
// and vets every range as the session's device memory before the library sees it, which judges
// the rest (the stream, the flags, the indexes' order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/wire.h"

namespace gvirtus {

inline constexpr uint64_t kMaxManagedBatch = 4096;

// What the stub may send, checked as the libraries document their batches, so that a malformed
// one is refused at once rather than at the stream's next wait: arrays present where their counts
// say, within the limits, the reserved flags zero; for a batch that prefetches (`prefetch`), at
// least one location for a non-empty batch, the first applying from range 0 and each next one
// from the same or a later range within the batch (a GPU takes {0, 0}: H200, driver 580).
inline bool managed_batch_shape_ok(const void* addresses, const size_t* sizes, size_t count,
                                   const void* locations, const size_t* firsts,
                                   size_t location_count, unsigned long long flags, bool prefetch) {
  if (count > kMaxManagedBatch || location_count > count || flags != 0 ||
      (count != 0 && (addresses == nullptr || sizes == nullptr)) ||
      (location_count != 0 && (locations == nullptr || firsts == nullptr))) {
    return false;
  }
  if (!prefetch) return location_count == 0;
  if (count == 0) return true;  // the library's to judge
  if (location_count == 0 || firsts[0] != 0) return false;
  for (size_t i = 1; i < location_count; ++i) {
    if (firsts[i] < firsts[i - 1] || firsts[i] >= count) return false;
  }
  return true;
}

inline uint64_t managed_batch_address(const void* address) {
  return reinterpret_cast<uintptr_t>(address);
}
inline uint64_t managed_batch_address(unsigned long long address) {
  return address;
}

// The request after its stream. `Address`: void* (the runtime's) or CUdeviceptr (the driver's).
template <typename Address, typename Location>
void put_managed_batch(WireWriter& w, uint64_t flags, const Address* addresses, const size_t* sizes,
                       size_t count, const Location* locations, const size_t* firsts,
                       size_t location_count) {
  w.put<uint64_t>(flags);
  w.put<uint64_t>(count);
  for (size_t i = 0; i < count; ++i) {
    w.put<uint64_t>(managed_batch_address(addresses[i]));
    w.put<uint64_t>(sizes[i]);
  }
  w.put<uint64_t>(location_count);
  for (size_t i = 0; i < location_count; ++i) {
    w.put_raw(&locations[i], sizeof(Location));
    w.put<uint64_t>(firsts[i]);
  }
}

// A request as the backend read it, after its stream; the arrays as the library takes them.
template <typename Location>
struct ManagedBatch {
  uint64_t flags = 0;
  std::vector<uint64_t> addresses;
  std::vector<size_t> sizes;
  std::vector<Location> locations;
  std::vector<size_t> firsts;
};

// Reads the rest of a request whose stream was read; `discard`: a discard alone, which names no
// location. Raises kInvalidInput when the batch exceeds its limits or its own length.
template <typename Location>
ManagedBatch<Location> read_managed_batch(WireReader& in, bool discard) {
  ManagedBatch<Location> batch;
  batch.flags = in.get<uint64_t>();
  const auto count = in.get<uint64_t>();
  if (count > kMaxManagedBatch || in.remaining() < count * 2 * sizeof(uint64_t)) {
    raise(ErrorKind::kInvalidInput, "a managed batch of " + std::to_string(count) + " ranges");
  }
  batch.addresses.resize(count);
  batch.sizes.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    batch.addresses[i] = in.get<uint64_t>();
    batch.sizes[i] = static_cast<size_t>(in.get<uint64_t>());
  }
  const auto locations = in.get<uint64_t>();
  if (locations > count || (discard && locations != 0)) {
    raise(ErrorKind::kInvalidInput, "a managed batch's " + std::to_string(locations) +
                                        " locations for " + std::to_string(count) + " ranges");
  }
  batch.locations.resize(locations);
  batch.firsts.resize(locations);
  for (uint64_t i = 0; i < locations; ++i) {
    const auto bytes = in.get_raw(sizeof(Location));
    std::memcpy(&batch.locations[i], bytes.data(), sizeof(Location));
    batch.firsts[i] = static_cast<size_t>(in.get<uint64_t>());
  }
  in.expect_end();
  return batch;
}

}  // namespace gvirtus

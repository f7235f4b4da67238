// The virtual memory a session reserved (cuMemAddressReserve) and what it mapped into it
// (cuMemMap), kept by the client libcuda.so.1 and by the backend alike: both must know which
// device addresses are usable - mapped - and the backend must vet every request against it.
// Mappings that touch form one usable run, so a copy or access setting may span the physical
// allocations of an expandable segment, as on the driver.
//
// Not thread-safe: the owner locks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace gvirtus::cuda {

class VirtualRanges {
 public:
  using Run = std::pair<uint64_t, uint64_t>;  // start, bytes

  // A new reservation; false if it overlaps one (the driver never hands out overlapping ones).
  bool reserve(uint64_t start, uint64_t bytes);
  // Forgets a reservation given exactly as reserved, with nothing mapped in it.
  bool release(uint64_t start, uint64_t bytes);
  // The start of the reservation holding all of [start, start + bytes), if one does.
  std::optional<uint64_t> reservation_of(uint64_t start, uint64_t bytes) const;
  // Records a mapping inside one reservation, overlapping no other mapping.
  bool map(uint64_t start, uint64_t bytes);
  // Forgets the mappings inside [start, start + bytes); false (and nothing forgotten) when the
  // range holds none or cuts one.
  bool unmap(uint64_t start, uint64_t bytes);
  // Whether every byte of [start, start + bytes) is mapped.
  bool mapped(uint64_t start, uint64_t bytes) const;
  // The usable runs of a reservation: its mappings, adjacent ones joined.
  std::vector<Run> runs(uint64_t reservation) const;

 private:
  std::map<uint64_t, uint64_t> reservations_;  // start -> bytes
  std::map<uint64_t, uint64_t> mappings_;      // start -> bytes
};

}  // namespace gvirtus::cuda

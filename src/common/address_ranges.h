// Address ranges a stub library knows the nature of (device allocations it saw succeed, host
// memory it allocated or registered), by start address, with the flags they were made with. A
// stub uses them to tell device from host pointers and to answer pointer queries for host
// memory, which the backend cannot see. Thread-safe; lookups take a shared lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>

namespace gvirtus {

class AddressRanges {
 public:
  struct Range {
    uintptr_t start;
    size_t bytes;
    unsigned flags;  // the flags the range was created with
    int device;      // device allocations: the device they live on (-1: unknown)
    uint64_t noted;  // the stub's allocation clock when it was noted (0: not kept by clock)
  };

  void add(const void* start, size_t bytes, unsigned flags, int device = -1, uint64_t noted = 0);
  // Forgets the range that starts exactly at `start`; false if there is none.
  bool remove(const void* start);
  // Forgets the range that starts at `start` if it was noted at or before `clock`: a free reads
  // the clock before it is sent, so that an allocation another thread is handed at the freed
  // address meanwhile (noted later) survives the free's late note.
  bool remove_noted_by(const void* start, uint64_t clock);
  // Forgets the range that starts exactly at `start` and returns it; nullopt if there is none.
  std::optional<Range> take(const void* start);
  // The range holding `address`, if any (a zero-byte range still names its start).
  std::optional<Range> find(const void* address) const;
  // Forgets every range on `device` (a device reset frees them all).
  void remove_device(int device);
  // Whether [start, start + bytes) meets any range.
  bool overlaps(const void* start, size_t bytes) const;

 private:
  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, Range> ranges_;  // by start
};

}  // namespace gvirtus

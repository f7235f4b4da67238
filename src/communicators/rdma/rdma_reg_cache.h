// Memory registrations for zero-copy sends of caller memory, made once and reused.
//
// Connection::register_memory() adds a range (page-aligned, merged with nothing, kept for the life
// of the connection); send() then writes segments that lie inside a registered range straight
// from the caller's memory instead of copying them into a staging slot. Registration happens
// only there, never on the data path. Only memory the caller keeps mapped for the connection's
// life may be registered: a registration pins the pages it saw, so memory unmapped and mapped
// again at the same address would be read from the old pages. Bounded by max_registered_bytes;
// past the bound, ranges are not registered (sends copy them, which is always correct).
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace gvirtus::rdma {

class RegistrationCache {
 public:
  RegistrationCache(ibv_pd* pd, uint64_t max_bytes) : pd_(pd), max_bytes_(max_bytes) {}
  ~RegistrationCache();
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // Registers [addr, addr+bytes) unless it is already covered or the bound is reached. Returns
  // whether the range is now registered. Thread-safe.
  bool add(const void* addr, size_t bytes);

  // The lkey of a registration covering [addr, addr+bytes) entirely, or 0 when there is none.
  uint32_t find(const void* addr, size_t bytes) const;

  // Forgets the registrations without deregistering (the daemon after handing off a connection).
  void abandon();

 private:
  uint32_t find_locked(const void* addr, size_t bytes) const;

  struct Entry {
    uintptr_t end;
    ibv_mr* mr;
  };
  ibv_pd* pd_;
  uint64_t max_bytes_;
  uint64_t bytes_ = 0;
  mutable std::mutex mutex_;
  std::map<uintptr_t, Entry> entries_;  // by start address
};

}  // namespace gvirtus::rdma

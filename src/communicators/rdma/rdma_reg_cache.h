// Memory registrations for zero-copy sends of caller memory, made once and reused.
//
// Connection::register_memory() adds a range (widened to whole pages); send() then writes
// segments that lie inside a registered range straight from the caller's memory instead of
// copying them into a staging slot. Registration happens only there, never on the data path.
// Connection::unregister_memory() removes it again: a registration pins the pages it saw, so
// memory unmapped and mapped again at the same address would be read from the old pages - the
// stubs register page-locked host memory when it is allocated or registered and unregister it
// before it is freed. The same page range registered twice (two small ranges on one page) is
// counted and deregistered with its last removal. Bounded by max_registered_bytes; past the
// bound, ranges are not registered (sends copy them, which is always correct).
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace gvirtus::rdma {

class RegistrationCache {
 public:
  RegistrationCache(ibv_pd* pd, uint64_t max_bytes) : pd_(pd), max_bytes_(max_bytes) {}
  ~RegistrationCache();
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // Registers [addr, addr+bytes) (whole pages) unless the bound is reached; the same page range
  // again only counts once more. Returns whether the range is now registered. Thread-safe.
  bool add(const void* addr, size_t bytes);

  // Takes back one add() of the same range; the registration goes with the last one. Returns
  // whether there was one. The caller removes only memory no send is reading any more (a send
  // returns once the writes that read caller memory completed). Thread-safe.
  bool remove(const void* addr, size_t bytes);

  // The lkey of a registration covering [addr, addr+bytes) entirely, or 0 when there is none.
  uint32_t find(const void* addr, size_t bytes) const;

  // Bytes registered now (whole pages), for tests and logs.
  uint64_t registered_bytes() const;

  // Forgets the registrations without deregistering (the daemon after handing off a connection).
  void abandon();

 private:
  using Pages = std::pair<uintptr_t, uintptr_t>;  // [start, end), page-aligned
  static Pages pages_of(const void* addr, size_t bytes);
  uint32_t find_locked(const void* addr, size_t bytes) const;

  struct Entry {
    ibv_mr* mr;
    uint32_t uses;
  };
  ibv_pd* pd_;
  uint64_t max_bytes_;
  uint64_t bytes_ = 0;
  mutable std::mutex mutex_;
  std::map<Pages, Entry> entries_;  // by start, then end
};

}  // namespace gvirtus::rdma

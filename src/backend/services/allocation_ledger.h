// The device memory a session's application holds through a library's allocators, for every
// plugin (a shared backend service): what gvirtus-smi shows as the session's allocated memory,
// and what a library without a runtime to ask vets device pointers against.
//
// The generated handlers feed it from the annotations of their rows: after a successful "alloc"
// call they record the address and the row's byte expression, after a successful "free" they
// drop the address. The total is published to the session's shared word by adding and
// subtracting (fetch_add), so several plugins of one session count into it side by side.
//
// Thread affinity: locked (several executors of one session).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace gvirtus::services {

class AllocationLedger {
 public:
  // Starts empty, publishing into `published` (may be null); what was published before is taken
  // back.
  void reset(std::atomic<uint64_t>* published);
  void allocated(const void* address, uint64_t bytes);
  void freed(const void* address);
  // Device memory the library placed itself, owned by one of its handles (a module's global
  // variables): vetted like an allocation, not counted as the application's, and gone with its
  // owner ("global" rows record it, a "destroy" of the owner drops it).
  void owned(const void* owner, const void* address, uint64_t bytes);
  void owner_gone(const void* owner);
  // Whether [address, address + bytes) lies inside one recorded allocation (bytes 0: the first
  // byte).
  bool contains(const void* address, uint64_t bytes) const;
  uint64_t bytes() const;

 private:
  void publish(int64_t delta);
  mutable std::mutex mutex_;
  std::map<uintptr_t, uint64_t> sizes_;  // address -> bytes, ordered for contains()
  struct Owned {
    uint64_t bytes;
    const void* owner;
  };
  std::map<uintptr_t, Owned> owned_;  // address -> range, ordered for contains()
  uint64_t bytes_ = 0;
  std::atomic<uint64_t>* published_ = nullptr;
};

}  // namespace gvirtus::services

// The device memory a session's application holds through a library's allocators, for every
// plugin (a shared backend service): what gvirtus-smi shows as the session's allocated memory,
// and what a library without a runtime to ask vets device pointers against.
//
// The generated handlers feed it from the annotations of their rows: after a successful "alloc"
// call they record the address and the row's byte expression; before a "free" call (or the
// destroy of an owner) they withdraw the address (LedgerWithdrawal) and put it back only if the
// call fails. Withdrawing first matters: once the library has freed an address, another
// executor's allocation may be handed the same address and recorded at once, and a late drop
// would forget that new allocation. The total is published to the session's shared word by adding
// and subtracting (fetch_add), so several plugins of one session count into it side by side.
//
// Thread affinity: locked (several executors of one session).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace gvirtus::services {

class AllocationLedger {
 public:
  // Starts empty, publishing into `published` (may be null); what was published before is taken
  // back.
  void reset(std::atomic<uint64_t>* published);
  void allocated(const void* address, uint64_t bytes);
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
  friend class LedgerWithdrawal;
  struct Owned {
    uint64_t bytes;
    const void* owner;
  };
  struct Withdrawn {
    std::vector<std::pair<uintptr_t, uint64_t>> sizes;
    std::vector<std::pair<uintptr_t, Owned>> owned;
  };
  // Moves the allocation at `address` (or every range `owner` owns) into `into`.
  void withdraw_allocation(const void* address, Withdrawn& into);
  void withdraw_owned(const void* owner, Withdrawn& into);
  // Puts withdrawn entries back, unless the address was recorded again meanwhile.
  void put_back(const Withdrawn& entries);

  void publish(int64_t delta);
  mutable std::mutex mutex_;
  std::map<uintptr_t, uint64_t> sizes_;  // address -> bytes, ordered for contains()
  std::map<uintptr_t, Owned> owned_;     // address -> range, ordered for contains()
  uint64_t bytes_ = 0;
  std::atomic<uint64_t>* published_ = nullptr;
};

// What a free or a destroy in flight took out of the ledger: put back when it goes out of scope
// unless done() says the library's call succeeded (a failed free leaves the memory allocated).
class LedgerWithdrawal {
 public:
  explicit LedgerWithdrawal(AllocationLedger& ledger) : ledger_(ledger) {}
  ~LedgerWithdrawal();
  LedgerWithdrawal(const LedgerWithdrawal&) = delete;
  LedgerWithdrawal& operator=(const LedgerWithdrawal&) = delete;

  // Takes out the allocation at `address` / every range `owner` owns (none: nothing).
  void allocation(const void* address) { ledger_.withdraw_allocation(address, entries_); }
  void owned_by(const void* owner) { ledger_.withdraw_owned(owner, entries_); }
  void done() { done_ = true; }

 private:
  AllocationLedger& ledger_;
  AllocationLedger::Withdrawn entries_;
  bool done_ = false;
};

}  // namespace gvirtus::services

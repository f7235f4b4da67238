// The device memory a session's application holds through a library's allocators, for every
// plugin (a shared backend service): what gvirtus-smi shows as the session's allocated memory,
// and what a library without a runtime to ask vets device pointers against.
//
// The generated handlers feed it from the annotations of their rows: after a successful "alloc"
// call they record the address, the row's byte expression and the context it was made in (its
// handle owner), forgotten when that context ends; before a "free" call (or the
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
#include <limits>
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
  // An allocation that ends only with its free, whatever becomes of contexts (a pool's memory
  // imported from another process).
  static constexpr int kNoContext = std::numeric_limits<int>::min();
  // `context` is the handle owner (handle_table.h) of the context the allocation was made in: a
  // device for its primary context, a number of a context of one's own.
  void allocated(const void* address, uint64_t bytes, int context = kNoContext);
  // The context `context` ended (destroyed, or a primary context reset or released for the last
  // time), and the library freed every allocation made in it: they are forgotten.
  void context_gone(int context);
  // Device memory the library placed itself, owned by one of its handles (a module's global
  // variables): vetted like an allocation, not counted as the application's, and gone with its
  // owner ("global" rows record it, a "destroy" of the owner drops it).
  // `freeable`: memory the library's free takes too (a graph's allocation node places memory
  // that cuMemFree or cudaFree may free): a free of its address withdraws it.
  void owned(const void* owner, const void* address, uint64_t bytes, bool freeable = false);
  void owner_gone(const void* owner);
  // Every range `owner` owns is `heir`'s from now (a graph's memory, once the graph is gone,
  // still lies where its executable graphs' launches placed it, until freed).
  void hand_over(const void* owner, const void* heir);
  // Whether [address, address + bytes) lies inside one recorded allocation (bytes 0: the first
  // byte).
  bool contains(const void* address, uint64_t bytes) const;
  uint64_t bytes() const;

 private:
  friend class LedgerWithdrawal;
  struct Owned {
    uint64_t bytes;
    const void* owner;
    bool freeable;
  };
  struct Allocation {
    uint64_t bytes;
    int context;
  };
  struct Withdrawn {
    std::vector<std::pair<uintptr_t, Allocation>> allocations;
    std::vector<std::pair<uintptr_t, Owned>> owned;
  };
  // Moves the allocation at `address` (with a freeable owned range starting there), or every
  // range `owner` owns, into `into`.
  void withdraw_allocation(const void* address, Withdrawn& into);
  void withdraw_owned(const void* owner, Withdrawn& into);
  // Puts withdrawn entries back, unless the address was recorded again meanwhile.
  void put_back(const Withdrawn& entries);

  void publish(int64_t delta);
  mutable std::mutex mutex_;
  std::map<uintptr_t, Allocation> allocations_;  // by address, ordered for contains()
  std::map<uintptr_t, Owned> owned_;             // address -> range, ordered for contains()
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

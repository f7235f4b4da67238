#include "backend/services/allocation_ledger.h"

namespace gvirtus::services {

void AllocationLedger::reset(std::atomic<uint64_t>* published) {
  std::lock_guard lock(mutex_);
  publish(-static_cast<int64_t>(bytes_));
  allocations_.clear();
  owned_.clear();
  bytes_ = 0;
  published_ = published;
}

void AllocationLedger::allocated(const void* address, uint64_t bytes, int context) {
  if (address == nullptr) return;
  std::lock_guard lock(mutex_);
  // A reused address whose free we did not see (freed by a call not annotated) is replaced.
  Allocation& allocation = allocations_[reinterpret_cast<uintptr_t>(address)];
  const int64_t delta = static_cast<int64_t>(bytes) - static_cast<int64_t>(allocation.bytes);
  bytes_ += delta;
  allocation = Allocation{bytes, context};
  publish(delta);
}

void AllocationLedger::context_gone(int context) {
  if (context == kNoContext) return;
  std::lock_guard lock(mutex_);
  uint64_t gone = 0;
  std::erase_if(allocations_, [&](const auto& entry) {
    if (entry.second.context != context) return false;
    gone += entry.second.bytes;
    return true;
  });
  bytes_ -= gone;
  publish(-static_cast<int64_t>(gone));
}

namespace {

// Whether [first, first + span) lies inside the range of `ranges` starting at or before `first`.
template <typename Map, typename SizeOf>
bool inside(const Map& ranges, uintptr_t first, uint64_t span, SizeOf size_of) {
  auto it = ranges.upper_bound(first);
  if (it == ranges.begin()) return false;
  --it;
  const uint64_t offset = first - it->first;
  const uint64_t size = size_of(it->second);
  return offset < size && span <= size - offset;
}

}  // namespace

bool AllocationLedger::contains(const void* address, uint64_t bytes) const {
  const auto first = reinterpret_cast<uintptr_t>(address);
  const uint64_t span = bytes == 0 ? 1 : bytes;
  std::lock_guard lock(mutex_);
  const auto held = [&](uintptr_t at) {
    return inside(allocations_, at, span, [](const Allocation& a) { return a.bytes; }) ||
           inside(owned_, at, span, [](const Owned& o) { return o.bytes; });
  };
  // Nothing of an allocation's end is touched by an empty range there (a copy of the last 0
  // elements: NVIDIA's mergeSort sample makes one).
  return held(first) || (bytes == 0 && first > 0 && held(first - 1));
}

void AllocationLedger::owned(const void* owner, const void* address, uint64_t bytes,
                             bool freeable) {
  std::lock_guard lock(mutex_);
  owned_[reinterpret_cast<uintptr_t>(address)] = Owned{bytes, owner, freeable};
}

void AllocationLedger::hand_over(const void* owner, const void* heir) {
  std::lock_guard lock(mutex_);
  for (auto& [address, range] : owned_) {
    if (range.owner == owner) range.owner = heir;
  }
}

void AllocationLedger::owner_gone(const void* owner) {
  std::lock_guard lock(mutex_);
  std::erase_if(owned_, [&](const auto& entry) { return entry.second.owner == owner; });
}

void AllocationLedger::withdraw_allocation(const void* address, Withdrawn& into) {
  std::lock_guard lock(mutex_);
  if (const auto range = owned_.find(reinterpret_cast<uintptr_t>(address));
      range != owned_.end() && range->second.freeable) {
    into.owned.emplace_back(*range);
    owned_.erase(range);
  }
  const auto it = allocations_.find(reinterpret_cast<uintptr_t>(address));
  if (it == allocations_.end()) return;
  into.allocations.emplace_back(*it);
  bytes_ -= it->second.bytes;
  publish(-static_cast<int64_t>(it->second.bytes));
  allocations_.erase(it);
}

void AllocationLedger::withdraw_owned(const void* owner, Withdrawn& into) {
  std::lock_guard lock(mutex_);
  std::erase_if(owned_, [&](const auto& entry) {
    if (entry.second.owner != owner) return false;
    into.owned.emplace_back(entry);
    return true;
  });
}

void AllocationLedger::put_back(const Withdrawn& entries) {
  std::lock_guard lock(mutex_);
  for (const auto& [address, allocation] : entries.allocations) {
    // A failed free left the memory allocated, so nothing can have been handed its address.
    if (!allocations_.emplace(address, allocation).second) continue;
    bytes_ += allocation.bytes;
    publish(static_cast<int64_t>(allocation.bytes));
  }
  for (const auto& entry : entries.owned) owned_.insert(entry);
}

LedgerWithdrawal::~LedgerWithdrawal() {
  if (!done_) ledger_.put_back(entries_);
}

uint64_t AllocationLedger::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

void AllocationLedger::publish(int64_t delta) {
  if (published_ == nullptr || delta == 0) return;
  published_->fetch_add(static_cast<uint64_t>(delta), std::memory_order_relaxed);
}

}  // namespace gvirtus::services

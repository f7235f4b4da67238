#include "backend/services/allocation_ledger.h"

namespace gvirtus::services {

void AllocationLedger::reset(std::atomic<uint64_t>* published) {
  std::lock_guard lock(mutex_);
  publish(-static_cast<int64_t>(bytes_));
  sizes_.clear();
  owned_.clear();
  bytes_ = 0;
  published_ = published;
}

void AllocationLedger::allocated(const void* address, uint64_t bytes) {
  if (address == nullptr) return;
  std::lock_guard lock(mutex_);
  // A reused address whose free we did not see (freed by a call not annotated) is replaced.
  uint64_t& size = sizes_[reinterpret_cast<uintptr_t>(address)];
  const int64_t delta = static_cast<int64_t>(bytes) - static_cast<int64_t>(size);
  bytes_ += delta;
  size = bytes;
  publish(delta);
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
    return inside(sizes_, at, span, [](uint64_t size) { return size; }) ||
           inside(owned_, at, span, [](const Owned& o) { return o.bytes; });
  };
  // Nothing of an allocation's end is touched by an empty range there (a copy of the last 0
  // elements: NVIDIA's mergeSort sample makes one).
  return held(first) || (bytes == 0 && first > 0 && held(first - 1));
}

void AllocationLedger::owned(const void* owner, const void* address, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  owned_[reinterpret_cast<uintptr_t>(address)] = Owned{bytes, owner};
}

void AllocationLedger::owner_gone(const void* owner) {
  std::lock_guard lock(mutex_);
  std::erase_if(owned_, [&](const auto& entry) { return entry.second.owner == owner; });
}

void AllocationLedger::withdraw_allocation(const void* address, Withdrawn& into) {
  std::lock_guard lock(mutex_);
  const auto it = sizes_.find(reinterpret_cast<uintptr_t>(address));
  if (it == sizes_.end()) return;
  into.sizes.emplace_back(*it);
  bytes_ -= it->second;
  publish(-static_cast<int64_t>(it->second));
  sizes_.erase(it);
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
  for (const auto& [address, bytes] : entries.sizes) {
    // A failed free left the memory allocated, so nothing can have been handed its address.
    if (!sizes_.emplace(address, bytes).second) continue;
    bytes_ += bytes;
    publish(static_cast<int64_t>(bytes));
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

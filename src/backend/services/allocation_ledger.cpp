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

void AllocationLedger::freed(const void* address) {
  std::lock_guard lock(mutex_);
  const auto it = sizes_.find(reinterpret_cast<uintptr_t>(address));
  if (it == sizes_.end()) return;
  bytes_ -= it->second;
  publish(-static_cast<int64_t>(it->second));
  sizes_.erase(it);
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
  return inside(sizes_, first, span, [](uint64_t size) { return size; }) ||
         inside(owned_, first, span, [](const Owned& o) { return o.bytes; });
}

void AllocationLedger::owned(const void* owner, const void* address, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  owned_[reinterpret_cast<uintptr_t>(address)] = Owned{bytes, owner};
}

void AllocationLedger::owner_gone(const void* owner) {
  std::lock_guard lock(mutex_);
  std::erase_if(owned_, [&](const auto& entry) { return entry.second.owner == owner; });
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

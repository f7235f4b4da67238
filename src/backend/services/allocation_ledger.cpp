#include "backend/services/allocation_ledger.h"

namespace gvirtus::services {

void AllocationLedger::reset(std::atomic<uint64_t>* published) {
  std::lock_guard lock(mutex_);
  publish(-static_cast<int64_t>(bytes_));
  sizes_.clear();
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

bool AllocationLedger::contains(const void* address, uint64_t bytes) const {
  const auto first = reinterpret_cast<uintptr_t>(address);
  std::lock_guard lock(mutex_);
  auto it = sizes_.upper_bound(first);
  if (it == sizes_.begin()) return false;
  --it;  // the allocation starting at or before `first`
  const uint64_t offset = first - it->first;
  const uint64_t span = bytes == 0 ? 1 : bytes;
  return offset < it->second && span <= it->second - offset;
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

#include "common/address_ranges.h"

#include <mutex>

namespace gvirtus {

void AddressRanges::add(const void* start, size_t bytes, unsigned flags, int device,
                        uint64_t noted) {
  const auto at = reinterpret_cast<uintptr_t>(start);
  std::unique_lock lock(mutex_);
  ranges_[at] = Range{at, bytes, flags, device, noted};
}

bool AddressRanges::remove_noted_by(const void* start, uint64_t clock) {
  std::unique_lock lock(mutex_);
  const auto it = ranges_.find(reinterpret_cast<uintptr_t>(start));
  if (it == ranges_.end() || it->second.noted > clock) return false;
  ranges_.erase(it);
  return true;
}

void AddressRanges::remove_device(int device) {
  std::unique_lock lock(mutex_);
  std::erase_if(ranges_, [&](const auto& entry) { return entry.second.device == device; });
}

std::optional<AddressRanges::Range> AddressRanges::take(const void* start) {
  std::unique_lock lock(mutex_);
  const auto node = ranges_.extract(reinterpret_cast<uintptr_t>(start));
  if (node.empty()) return std::nullopt;
  return node.mapped();
}

bool AddressRanges::remove(const void* start) {
  std::unique_lock lock(mutex_);
  return ranges_.erase(reinterpret_cast<uintptr_t>(start)) == 1;
}

std::optional<AddressRanges::Range> AddressRanges::find(const void* address) const {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::shared_lock lock(mutex_);
  auto it = ranges_.upper_bound(at);
  if (it == ranges_.begin()) return std::nullopt;
  --it;
  const Range& r = it->second;
  // A zero-byte range still names its start (cudaMalloc of 0 bytes may return an address).
  if (at == r.start || at - r.start < r.bytes) return r;
  return std::nullopt;
}

bool AddressRanges::overlaps(const void* start, size_t bytes) const {
  const auto at = reinterpret_cast<uintptr_t>(start);
  std::shared_lock lock(mutex_);
  auto it = ranges_.lower_bound(at);
  if (it != ranges_.end() && it->first < at + bytes) return true;
  if (it == ranges_.begin()) return false;
  --it;
  return at - it->second.start < it->second.bytes;
}

}  // namespace gvirtus

// First-fit allocation of aligned ranges in [0, capacity): the stub's page-locked blocks in the
// shm arena (plugins/cudart/frontend/shared_host.cpp). Freed ranges merge with free neighbours,
// so the space does not fragment into pieces that no longer fit. Offsets only: the caller owns
// the memory. Not thread-safe.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

namespace gvirtus {

class RangeAllocator {
 public:
  struct Range {
    uint64_t offset;
    uint64_t bytes;
  };

  explicit RangeAllocator(uint64_t capacity = 0, uint64_t align = 4096) : align_(align) {
    reset(capacity);
  }

  // Forgets every allocation; the whole capacity (whole aligned units of it) is free again.
  void reset(uint64_t capacity) {
    free_.clear();
    used_.clear();
    capacity_ = capacity / align_ * align_;
    if (capacity_ > 0) free_.emplace(0, capacity_);
  }

  // A range of at least `bytes` (rounded up to the alignment), or nullopt if no free range fits.
  std::optional<Range> take(uint64_t bytes) {
    if (bytes == 0 || bytes > capacity_) return std::nullopt;
    bytes = (bytes + align_ - 1) / align_ * align_;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < bytes) continue;
      const Range range{it->first, bytes};
      const uint64_t rest = it->second - bytes;
      free_.erase(it);
      if (rest > 0) free_.emplace(range.offset + bytes, rest);
      used_.emplace(range.offset, bytes);
      return range;
    }
    return std::nullopt;
  }

  // Frees the range that starts at `offset`; false if none does.
  bool give_back(uint64_t offset) {
    const auto it = used_.find(offset);
    if (it == used_.end()) return false;
    uint64_t start = offset, bytes = it->second;
    used_.erase(it);
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + bytes) {
      bytes += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      const auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        start = prev->first;
        bytes += prev->second;
        free_.erase(prev);
      }
    }
    free_.emplace(start, bytes);
    return true;
  }

  // The allocated range holding [offset, offset + bytes), if one does.
  std::optional<Range> find(uint64_t offset, uint64_t bytes) const {
    auto it = used_.upper_bound(offset);
    if (it == used_.begin()) return std::nullopt;
    --it;
    const Range range{it->first, it->second};
    if (bytes > range.bytes || offset - range.offset > range.bytes - bytes) return std::nullopt;
    return range;
  }

  uint64_t capacity() const { return capacity_; }
  uint64_t free_bytes() const {
    uint64_t total = 0;
    for (const auto& [offset, bytes] : free_) total += bytes;
    return total;
  }
  size_t free_ranges() const { return free_.size(); }

 private:
  uint64_t align_;
  uint64_t capacity_ = 0;
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes
  std::map<uint64_t, uint64_t> used_;  // offset -> bytes
};

}  // namespace gvirtus

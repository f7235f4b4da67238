#include "plugins/cuda/common/virtual_ranges.h"

namespace gvirtus::cuda {
namespace {

bool sane(uint64_t start, uint64_t bytes) {
  return bytes != 0 && start <= UINT64_MAX - bytes;
}

// The entry of `ranges` holding `address`, or end().
std::map<uint64_t, uint64_t>::const_iterator holding(const std::map<uint64_t, uint64_t>& ranges,
                                                     uint64_t address) {
  auto it = ranges.upper_bound(address);
  if (it == ranges.begin()) return ranges.end();
  --it;
  return address - it->first < it->second ? it : ranges.end();
}

bool overlaps(const std::map<uint64_t, uint64_t>& ranges, uint64_t start, uint64_t bytes) {
  if (holding(ranges, start) != ranges.end()) return true;
  const auto next = ranges.upper_bound(start);
  return next != ranges.end() && next->first < start + bytes;
}

}  // namespace

bool VirtualRanges::reserve(uint64_t start, uint64_t bytes) {
  if (!sane(start, bytes) || overlaps(reservations_, start, bytes)) return false;
  reservations_.emplace(start, bytes);
  return true;
}

bool VirtualRanges::release(uint64_t start, uint64_t bytes) {
  const auto it = reservations_.find(start);
  if (it == reservations_.end() || it->second != bytes || overlaps(mappings_, start, bytes)) {
    return false;
  }
  reservations_.erase(it);
  return true;
}

std::optional<uint64_t> VirtualRanges::reservation_of(uint64_t start, uint64_t bytes) const {
  if (!sane(start, bytes)) return std::nullopt;
  const auto it = holding(reservations_, start);
  if (it == reservations_.end() || start + bytes > it->first + it->second) return std::nullopt;
  return it->first;
}

bool VirtualRanges::map(uint64_t start, uint64_t bytes) {
  if (!reservation_of(start, bytes) || overlaps(mappings_, start, bytes)) return false;
  mappings_.emplace(start, bytes);
  return true;
}

bool VirtualRanges::unmap(uint64_t start, uint64_t bytes) {
  if (!sane(start, bytes) || holding(mappings_, start) != mappings_.find(start)) {
    return false;  // the range starts inside a mapping, or at none
  }
  const auto first = mappings_.find(start);
  if (first == mappings_.end()) return false;
  auto last = first;
  for (auto it = first; it != mappings_.end() && it->first < start + bytes; ++it) {
    if (it->first + it->second > start + bytes) return false;  // it cuts this mapping
    last = std::next(it);
  }
  mappings_.erase(first, last);
  return true;
}

bool VirtualRanges::mapped(uint64_t start, uint64_t bytes) const {
  if (!sane(start, bytes)) return false;
  uint64_t at = start;
  for (auto it = holding(mappings_, at); it != mappings_.end() && it->first <= at;
       it = mappings_.find(it->first + it->second)) {
    at = it->first + it->second;
    if (at >= start + bytes) return true;
  }
  return false;
}

std::vector<VirtualRanges::Run> VirtualRanges::runs(uint64_t reservation) const {
  std::vector<Run> runs;
  const auto r = reservations_.find(reservation);
  if (r == reservations_.end()) return runs;
  for (auto it = mappings_.lower_bound(r->first);
       it != mappings_.end() && it->first < r->first + r->second; ++it) {
    if (!runs.empty() && runs.back().first + runs.back().second == it->first) {
      runs.back().second += it->second;
    } else {
      runs.emplace_back(it->first, it->second);
    }
  }
  return runs;
}

}  // namespace gvirtus::cuda

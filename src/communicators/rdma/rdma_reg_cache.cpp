#include "communicators/rdma/rdma_reg_cache.h"

#include <unistd.h>

#include "common/log.h"

namespace gvirtus::rdma {

RegistrationCache::~RegistrationCache() {
  for (auto& [pages, entry] : entries_) ::ibv_dereg_mr(entry.mr);
}

void RegistrationCache::abandon() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  bytes_ = 0;
}

RegistrationCache::Pages RegistrationCache::pages_of(const void* addr, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + bytes + page - 1) & ~(page - 1);
  return {start, end};
}

bool RegistrationCache::add(const void* addr, size_t bytes) {
  if (addr == nullptr || bytes == 0) return false;
  const Pages pages = pages_of(addr, bytes);
  const uint64_t size = pages.second - pages.first;
  std::lock_guard lock(mutex_);
  if (const auto it = entries_.find(pages); it != entries_.end()) {
    ++it->second.uses;
    return true;
  }
  if (bytes_ + size > max_bytes_) {
    GVIRTUS_LOG(kInfo) << "rdma: not registering " << bytes << " more bytes (bound " << max_bytes_
                       << " reached); sends from there are copied";
    return false;
  }
  // Source of RDMA writes only: local read access is implied, nothing remote may touch it.
  ibv_mr* mr = ::ibv_reg_mr(pd_, reinterpret_cast<void*>(pages.first), size, 0);
  if (mr == nullptr) {
    GVIRTUS_LOG(kInfo) << "rdma: registering " << size << " bytes failed; sends copy";
    return false;
  }
  entries_.emplace(pages, Entry{mr, 1});
  bytes_ += size;
  return true;
}

bool RegistrationCache::remove(const void* addr, size_t bytes) {
  if (addr == nullptr || bytes == 0) return false;
  const Pages pages = pages_of(addr, bytes);
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(pages);
  if (it == entries_.end()) return false;
  if (--it->second.uses > 0) return true;
  ::ibv_dereg_mr(it->second.mr);
  bytes_ -= pages.second - pages.first;
  entries_.erase(it);
  return true;
}

uint32_t RegistrationCache::find(const void* addr, size_t bytes) const {
  std::lock_guard lock(mutex_);
  return find_locked(addr, bytes);
}

uint64_t RegistrationCache::registered_bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

uint32_t RegistrationCache::find_locked(const void* addr, size_t bytes) const {
  // Registrations may overlap (two ranges sharing a page): any one that starts at or before
  // `addr` may cover it, the nearest start first. Looked for among the nearest few only: this
  // runs per segment sent, and a miss only costs a copy.
  constexpr int kLooks = 8;
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  auto it = entries_.upper_bound(Pages{a, UINTPTR_MAX});
  for (int looks = 0; looks < kLooks && it != entries_.begin(); ++looks) {
    --it;
    if (a + bytes <= it->first.second) return it->second.mr->lkey;
  }
  return 0;
}

}  // namespace gvirtus::rdma

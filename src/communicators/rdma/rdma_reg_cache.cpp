#include "communicators/rdma/rdma_reg_cache.h"

#include <unistd.h>

#include "common/log.h"

namespace gvirtus::rdma {

RegistrationCache::~RegistrationCache() {
  for (auto& [start, entry] : entries_) ::ibv_dereg_mr(entry.mr);
}

void RegistrationCache::abandon() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

bool RegistrationCache::add(const void* addr, size_t bytes) {
  if (addr == nullptr || bytes == 0) return false;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + bytes + page - 1) & ~(page - 1);
  std::lock_guard lock(mutex_);
  if (find_locked(addr, bytes) != 0) return true;
  if (bytes_ + (end - start) > max_bytes_) {
    GVIRTUS_LOG(kInfo) << "rdma: not registering " << bytes << " more bytes (bound " << max_bytes_
                       << " reached); sends from there are copied";
    return false;
  }
  // Source of RDMA writes only: local read access is implied, nothing remote may touch it.
  ibv_mr* mr = ::ibv_reg_mr(pd_, reinterpret_cast<void*>(start), end - start, 0);
  if (mr == nullptr) {
    GVIRTUS_LOG(kInfo) << "rdma: registering " << (end - start) << " bytes failed; sends copy";
    return false;
  }
  entries_[start] = {end, mr};
  bytes_ += end - start;
  return true;
}

uint32_t RegistrationCache::find(const void* addr, size_t bytes) const {
  std::lock_guard lock(mutex_);
  return find_locked(addr, bytes);
}

uint32_t RegistrationCache::find_locked(const void* addr, size_t bytes) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  auto it = entries_.upper_bound(a);
  if (it == entries_.begin()) return 0;
  --it;
  return a + bytes <= it->second.end ? it->second.mr->lkey : 0;
}

}  // namespace gvirtus::rdma

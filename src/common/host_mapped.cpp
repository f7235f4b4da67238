// Whether memory is mapped in this process (host_mapped.h).
#include "common/host_mapped.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace gvirtus {

bool host_mapped(const void* address, size_t bytes) {
  if (address == nullptr) return false;
  if (bytes == 0) return true;
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(address) / page * page;
  const uintptr_t last = reinterpret_cast<uintptr_t>(address) + (bytes - 1);
  if (last < start) return false;  // wraps around
  unsigned char residency[4096];   // one byte per page, 16 MiB of 4 KiB pages a call
  for (uintptr_t at = start; at <= last;) {
    const uintptr_t pages = std::min<uintptr_t>((last - at) / page + 1, sizeof residency);
    if (::mincore(reinterpret_cast<void*>(at), pages * page, residency) != 0) return false;
    at += pages * page;
    if (at == 0) break;  // reached the top of the address space
  }
  return true;
}

}  // namespace gvirtus

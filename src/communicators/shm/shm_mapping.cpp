#include "communicators/shm/shm_mapping.h"

#include <sys/mman.h>

#include <cerrno>

#include "common/error.h"

namespace gvirtus::shm {

Mapping::Mapping(int fd, uint64_t bytes, const std::string& what, void* at) {
  void* base = MAP_FAILED;
  if (at != nullptr) {
    base = ::mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    // A kernel older than MAP_FIXED_NOREPLACE treats `at` as a hint and may map elsewhere.
    if (base != MAP_FAILED && base != at) {
      ::munmap(base, bytes);
      base = MAP_FAILED;
    }
  }
  if (base == MAP_FAILED) base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) raise_errno("mmap " + what, errno);
  base_ = base;
  bytes_ = bytes;
}

void Mapping::reset() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
}

}  // namespace gvirtus::shm

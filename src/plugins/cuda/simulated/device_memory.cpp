#include "device_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "common/range_allocator.h"
#include "identity.h"

namespace gvirtus::simulated {
namespace {

// The fixed range: clear of where Linux places a process's mappings, its heap and its stack on
// x86-64 and AArch64 (with 47- or 48-bit addresses), and of AddressSanitizer's allocator and
// shadow. Twice a device's memory: room for alignment and for what frees leave between blocks.
constexpr uintptr_t kFixedBase = uintptr_t{0x520000000000};
constexpr uint64_t kFixedBytes = 2 * kDeviceBytes;
constexpr uint64_t kGranule = 256;  // every block starts at a multiple, its size rounded to one

std::mutex lock;
bool fixed = false;
std::byte* base = nullptr;
RangeAllocator blocks;  // of the fixed range, guarded by lock

uint64_t page() {
  static const auto bytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return bytes;
}

// Gives a run's whole pages back to the system: freed memory does not keep its pages.
void release_pages(uint64_t offset, uint64_t bytes) {
  const uint64_t first = (offset + page() - 1) / page() * page();
  const uint64_t last = (offset + bytes) / page() * page();
  if (last > first) ::madvise(base + first, last - first, MADV_DONTNEED);
}

}  // namespace

std::string configure_device_memory() {
  const std::lock_guard guard(lock);
  static std::string refusal;
  static bool configured = false;
  if (configured) return refusal;
  configured = true;
  const char* mode = std::getenv("GVIRTUS_SIMULATED_ADDRESSES");
  if (mode == nullptr || std::strcmp(mode, "host") == 0) return refusal;
  if (std::strcmp(mode, "fixed") != 0) {
    refusal = std::string("GVIRTUS_SIMULATED_ADDRESSES=\"") + mode +
              "\" is neither \"host\" nor \"fixed\"";
    return refusal;
  }
  void* range = ::mmap(reinterpret_cast<void*>(kFixedBase), kFixedBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (range == MAP_FAILED || range != reinterpret_cast<void*>(kFixedBase)) {
    const int err = errno;
    if (range != MAP_FAILED) ::munmap(range, kFixedBytes);  // a kernel that took it as a hint
    refusal = std::string("GVIRTUS_SIMULATED_ADDRESSES=fixed: cannot reserve the fixed range: ") +
              std::strerror(err);
    return refusal;
  }
  base = static_cast<std::byte*>(range);
  blocks = RangeAllocator(kFixedBytes, kGranule);
  fixed = true;
  return refusal;
}

std::byte* allocate_device_memory(size_t bytes, size_t alignment) {
  const uint64_t rounded = (bytes + alignment - 1) / alignment * alignment;
  {
    const std::lock_guard guard(lock);
    if (fixed) {
      if (alignment > kGranule) return nullptr;
      const auto block = blocks.take(rounded);  // at a multiple of kGranule, as every size
      return block ? base + block->offset : nullptr;
    }
  }
  return static_cast<std::byte*>(std::aligned_alloc(alignment, rounded));
}

void free_device_memory(std::byte* memory) {
  if (memory == nullptr) return;
  {
    const std::lock_guard guard(lock);
    if (fixed && memory >= base && memory < base + kFixedBytes) {
      const auto offset = static_cast<uint64_t>(memory - base);
      const auto block = blocks.find(offset, 1);
      if (!block || block->offset != offset) return;  // not a block of ours: nothing to give
      release_pages(block->offset, block->bytes);
      blocks.give_back(offset);
      return;
    }
  }
  std::free(memory);
}

}  // namespace gvirtus::simulated

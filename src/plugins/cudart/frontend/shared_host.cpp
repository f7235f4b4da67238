#include "plugins/cudart/frontend/shared_host.h"

#include <iterator>
#include <map>
#include <mutex>
#include <span>

#include "frontend/client.h"
#include "plugins/cudart/common/shared_host_wire.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct Block {
  uint64_t offset;
  uint64_t bytes;
  void* device;  // for cudaHostAllocMapped blocks; else null
};

// First-fit allocation of whole pages in one session's shared memory. A forked child gets a new
// session and so a new arena; blocks of the parent's arena are then simply not found here, and
// copies from them carry their bytes as for any client memory.
class SharedArena {
 public:
  // The arena of the current session, or nullptr when its transport shares no memory.
  std::span<std::byte> current() {
    std::span<std::byte> memory;
    try {
      memory = Client::instance().shared_memory();
    } catch (...) {
      return {};  // no session: the caller's own remote call reports why
    }
    std::lock_guard lock(mutex_);
    if (memory.data() != memory_.data() || memory.size() != memory_.size()) {
      memory_ = memory;
      free_.clear();
      blocks_.clear();
      if (!memory.empty()) free_.emplace(0, memory.size());
    }
    return memory_;
  }

  std::optional<Block> take(uint64_t bytes) {
    std::lock_guard lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < bytes) continue;
      const Block block{it->first, bytes, nullptr};
      const uint64_t rest = it->second - bytes;
      free_.erase(it);
      if (rest > 0) free_.emplace(block.offset + bytes, rest);
      blocks_.emplace(block.offset, block);
      return block;
    }
    return std::nullopt;
  }

  void set_device(uint64_t offset, void* device) {
    std::lock_guard lock(mutex_);
    if (auto it = blocks_.find(offset); it != blocks_.end()) it->second.device = device;
  }

  // Returns the block's pages to the free list, merged with free neighbours.
  void give_back(uint64_t offset) {
    std::lock_guard lock(mutex_);
    const auto it = blocks_.find(offset);
    if (it == blocks_.end()) return;
    uint64_t start = offset, bytes = it->second.bytes;
    blocks_.erase(it);
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + bytes) {
      bytes += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        start = prev->first;
        bytes += prev->second;
        free_.erase(prev);
      }
    }
    free_.emplace(start, bytes);
  }

  // The live block holding [ptr, ptr + count) in the current arena.
  std::optional<Block> find(const void* ptr, size_t count) {
    std::lock_guard lock(mutex_);
    const auto* p = static_cast<const std::byte*>(ptr);
    if (memory_.empty() || p < memory_.data() || p >= memory_.data() + memory_.size()) {
      return std::nullopt;
    }
    const auto offset = static_cast<uint64_t>(p - memory_.data());
    auto it = blocks_.upper_bound(offset);
    if (it == blocks_.begin()) return std::nullopt;
    const Block& block = std::prev(it)->second;
    if (count > block.bytes || offset + count > block.offset + block.bytes) return std::nullopt;
    return block;
  }

  std::byte* base() {
    std::lock_guard lock(mutex_);
    return memory_.data();
  }

 private:
  std::mutex mutex_;
  std::span<std::byte> memory_;
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes
  std::map<uint64_t, Block> blocks_;   // by offset
};

SharedArena& arena() {
  static SharedArena* a = new SharedArena;  // never destroyed: used until the process ends
  return *a;
}

}  // namespace

cudaError_t shared_host_alloc(size_t size, unsigned flags, SharedHostPlacement& placement) {
  placement = {};
  const auto memory = arena().current();
  if (memory.empty() || size > memory.size()) return cudaSuccess;
  const uint64_t bytes = (size + kSharedHostAlign - 1) / kSharedHostAlign * kSharedHostAlign;
  const auto block = arena().take(bytes);
  if (!block) return cudaSuccess;  // full: the caller allocates locally
  uint64_t device = 0;
  const cudaError_t rc = remote_sync(
      Fn::cudaHostRegisterShared,
      [&](WireWriter& w) {
        w.put<uint64_t>(block->offset);
        w.put<uint64_t>(block->bytes);
        w.put<uint32_t>(flags);
      },
      [&](WireReader& r) { device = r.get<uint64_t>(); });
  if (rc != cudaSuccess) {
    arena().give_back(block->offset);
    return rc;
  }
  arena().set_device(block->offset, reinterpret_cast<void*>(static_cast<uintptr_t>(device)));
  placement = {true, memory.data() + block->offset};
  return cudaSuccess;
}

std::optional<cudaError_t> shared_host_free(void* ptr) {
  const auto block = arena().find(ptr, 1);
  if (!block || arena().base() + block->offset != ptr) return std::nullopt;
  const cudaError_t rc = remote_sync(
      Fn::cudaHostUnregisterShared, [&](WireWriter& w) { w.put<uint64_t>(block->offset); },
      [](WireReader&) {});
  arena().give_back(block->offset);
  return rc;
}

std::optional<uint64_t> shared_host_offset(const void* ptr, size_t count) {
  if (!arena().find(ptr, count)) return std::nullopt;
  return static_cast<uint64_t>(static_cast<const std::byte*>(ptr) - arena().base());
}

std::optional<void*> shared_host_device_pointer(const void* ptr) {
  const auto block = arena().find(ptr, 1);
  if (!block || block->device == nullptr) return std::nullopt;
  const auto within = static_cast<const std::byte*>(ptr) - (arena().base() + block->offset);
  return static_cast<std::byte*>(block->device) + within;
}

}  // namespace gvirtus::cudart

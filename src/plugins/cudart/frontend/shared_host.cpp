#include "plugins/cudart/frontend/shared_host.h"

#include <pthread.h>

#include <map>
#include <mutex>
#include <new>
#include <span>

#include "common/range_allocator.h"
#include "common/wire_record.h"
#include "frontend/process_session.h"
#include "plugins/cudart/common/shared_host_wire.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct Block {
  uint64_t offset;
  uint64_t bytes;
  void* device;  // its device pointer, once the backend registered it
};

// A live block found for a pointer, and where the pointer is in the shared memory.
struct Found {
  Block block;
  uint64_t at;  // the pointer's offset in the shared memory
};

// The current session's shared memory and the blocks placed in it. A forked child gets a new
// session and so a new arena; blocks of the parent's arena are then simply not found here, and
// copies from them carry their bytes as for any client memory.
class SharedArena {
 public:
  // The arena of the current session, or an empty span when its transport shares no memory.
  std::span<std::byte> current() {
    std::span<std::byte> memory;
    try {
      memory = process_session::shared_memory();
    } catch (...) {
      return {};  // no session: the caller's own remote call reports why
    }
    std::lock_guard lock(mutex_);
    if (memory.data() != memory_.data() || memory.size() != memory_.size()) {
      memory_ = memory;
      ranges_.reset(memory.size());
      devices_.clear();
    }
    return memory_;
  }

  std::optional<Block> take(uint64_t bytes) {
    std::lock_guard lock(mutex_);
    const auto range = ranges_.take(bytes);
    if (!range) return std::nullopt;
    return Block{range->offset, range->bytes, nullptr};
  }

  void set_device(uint64_t offset, void* device) {
    std::lock_guard lock(mutex_);
    if (device != nullptr) devices_[offset] = device;
  }

  void give_back(uint64_t offset) {
    std::lock_guard lock(mutex_);
    ranges_.give_back(offset);
    devices_.erase(offset);
  }

  // The live block holding [ptr, ptr + count) in the current arena.
  std::optional<Found> find(const void* ptr, size_t count) {
    std::lock_guard lock(mutex_);
    const auto* p = static_cast<const std::byte*>(ptr);
    if (memory_.empty() || p < memory_.data() || p >= memory_.data() + memory_.size()) {
      return std::nullopt;
    }
    const auto at = static_cast<uint64_t>(p - memory_.data());
    const auto range = ranges_.find(at, count);
    if (!range) return std::nullopt;
    const auto device = devices_.find(range->offset);
    return Found{{range->offset, range->bytes, device == devices_.end() ? nullptr : device->second},
                 at};
  }

  // In a forked child: no arena until the child's own session gives one. Only the forking
  // thread exists, so no lock is held by anyone else (the mutex is made anew).
  void forget() {
    new (&mutex_) std::mutex;
    memory_ = {};
    ranges_.reset(0);
    devices_.clear();
  }

 private:
  std::mutex mutex_;
  std::span<std::byte> memory_;
  RangeAllocator ranges_{0, kSharedHostAlign};
  std::map<uint64_t, void*> devices_;  // offset -> device pointer of mapped blocks
};

SharedArena* g_arena = nullptr;

SharedArena& arena() {
  static SharedArena* a = [] {
    g_arena = new SharedArena;  // never destroyed: used until the process ends
    // A forked child has a session (and arena) of its own: the parent's blocks, still mapped in
    // the child, must not be taken for blocks of the child's arena. Their bytes then travel.
    ::pthread_atfork(nullptr, nullptr, [] { g_arena->forget(); });
    return g_arena;
  }();
  return *a;
}

}  // namespace

cudaError_t shared_host_alloc(size_t size, unsigned flags, SharedHostPlacement& placement) {
  placement = {};
  const auto memory = arena().current();
  if (memory.empty() || size > memory.size()) return cudaSuccess;
  const auto block = arena().take(size);
  if (!block) return cudaSuccess;  // full: the caller allocates locally
  uint64_t device = 0;
  const cudaError_t rc = remote_sync(
      Fn::cudaHostRegisterShared,
      [&](WireWriter& w) {
        put_record(w, RegisterShared{block->offset, block->bytes, flags});
      },
      [&](WireReader& r) { device = get_record<RegisteredShared>(r).device; });
  if (rc != cudaSuccess) {
    arena().give_back(block->offset);
    return rc;
  }
  arena().set_device(block->offset, reinterpret_cast<void*>(static_cast<uintptr_t>(device)));
  placement = {true, memory.data() + block->offset};
  return cudaSuccess;
}

std::optional<cudaError_t> shared_host_free(void* ptr) {
  const auto found = arena().find(ptr, 1);
  if (!found || found->at != found->block.offset) return std::nullopt;  // not its start
  const uint64_t offset = found->block.offset;
  const cudaError_t rc = remote_sync(
      Fn::cudaHostUnregisterShared, [&](WireWriter& w) { put_record(w, UnregisterShared{offset}); },
      [](WireReader&) {});
  arena().give_back(offset);
  return rc;
}

std::optional<uint64_t> shared_host_offset(const void* ptr, size_t count) {
  const auto found = arena().find(ptr, count);
  if (!found) return std::nullopt;
  return found->at;
}

void put_shared_copy(WireWriter& w, const void* device, uint64_t offset, uint64_t count,
                     cudaMemcpyKind kind, const cudaStream_t* stream) {
  put_record(w, SharedCopy{const_cast<void*>(device), offset, count, kind,
                           stream != nullptr ? *stream : nullptr});
}

const std::byte* shared_host_arena() {
  return arena().current().data();
}

std::optional<void*> shared_host_device_pointer(const void* ptr) {
  const auto found = arena().find(ptr, 1);
  if (!found || found->block.device == nullptr) return std::nullopt;
  return static_cast<std::byte*>(found->block.device) + (found->at - found->block.offset);
}

}  // namespace gvirtus::cudart

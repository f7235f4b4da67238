#include "plugins/cudart/frontend/shared_host.h"

#include <pthread.h>

#include <map>
#include <mutex>
#include <new>
#include <span>

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

// The current session's shared memory and the blocks this stub placed in it (the process's
// frontend places every stub's blocks, so that none overlaps another's). A forked child gets a new
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
      blocks_.clear();
    }
    return memory_;
  }

  std::optional<Block> take(uint64_t bytes) {
    std::optional<process_session::SharedBlock> taken;
    try {
      taken = process_session::take_shared(bytes);
    } catch (...) {
      return std::nullopt;  // no session: allocated locally, and the remote call says why
    }
    if (!taken) return std::nullopt;
    std::lock_guard lock(mutex_);
    const Block block{taken->offset, taken->bytes, nullptr};
    blocks_[block.offset] = block;
    return block;
  }

  void set_device(uint64_t offset, void* device) {
    std::lock_guard lock(mutex_);
    const auto block = blocks_.find(offset);
    if (block != blocks_.end()) block->second.device = device;
  }

  void give_back(uint64_t offset) {
    {
      std::lock_guard lock(mutex_);
      blocks_.erase(offset);
    }
    try {
      process_session::give_back_shared(offset);
    } catch (...) {  // the session is gone, and its arena with it
    }
  }

  // The live block holding [ptr, ptr + count) in the current arena.
  std::optional<Found> find(const void* ptr, size_t count) {
    std::lock_guard lock(mutex_);
    const auto* p = static_cast<const std::byte*>(ptr);
    if (memory_.empty() || p < memory_.data() || p >= memory_.data() + memory_.size()) {
      return std::nullopt;
    }
    const auto at = static_cast<uint64_t>(p - memory_.data());
    auto block = blocks_.upper_bound(at);
    if (block == blocks_.begin()) return std::nullopt;
    --block;
    const Block& b = block->second;
    if (at - b.offset >= b.bytes || count > b.bytes - (at - b.offset)) return std::nullopt;
    return Found{b, at};
  }

  // In a forked child: no arena until the child's own session gives one. Only the forking
  // thread exists, so no lock is held by anyone else (the mutex is made anew).
  void forget() {
    new (&mutex_) std::mutex;
    memory_ = {};
    blocks_.clear();
  }

 private:
  std::mutex mutex_;
  std::span<std::byte> memory_;
  std::map<uint64_t, Block> blocks_;  // by offset: this stub's live blocks
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

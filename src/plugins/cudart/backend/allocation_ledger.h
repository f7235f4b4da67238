// The device memory a session's application holds through the runtime's allocators, for status
// queries (gvirtus-smi's "Allocated" column).
//
// After a successful allocating or freeing call, memory_effect() reads what it did back from the
// call's own request and reply (the same encoding the generated handlers use), and the session's
// AllocationLedger records it: pointer -> bytes, so a free subtracts what its allocation added.
// Counted: cudaMalloc, cudaMallocPitch (pitch x height), cudaMalloc3D (pitch x height x depth),
// cudaMallocAsync, cudaMallocFromPoolAsync; cudaFree and cudaFreeAsync. Not counted: arrays,
// managed memory, memory inside modules. Thread-safe (several executors of one session).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>

#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

struct MemoryEffect {
  enum Kind { kNone, kAllocated, kFreed };
  Kind kind = kNone;
  uint64_t address = 0;
  uint64_t bytes = 0;  // for kAllocated
};

// Whether `fn` can allocate or free device memory (the calls worth looking at).
bool affects_device_memory(Fn fn);

// What a call did, from its request and its reply; kNone for other calls, failed calls (a result
// other than cudaSuccess) and anything unreadable. Never throws.
MemoryEffect memory_effect(Fn fn, WireReader request, std::span<const std::byte> reply);

class AllocationLedger {
 public:
  // `published` (may be null) receives the total after every change.
  explicit AllocationLedger(std::atomic<uint64_t>* published) : published_(published) {}

  void apply(const MemoryEffect& effect);
  uint64_t bytes() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, uint64_t> sizes_;  // device address -> bytes
  uint64_t bytes_ = 0;
  std::atomic<uint64_t>* published_;
};

}  // namespace gvirtus::cudart

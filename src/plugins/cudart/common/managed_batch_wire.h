// Batches of managed memory prefetches and discards on the wire (cudart rows 298-300:
// cudaMemPrefetchBatchAsync, cudaMemDiscardBatchAsync, cudaMemDiscardAndPrefetchBatchAsync), for
// the stub (frontend/managed_memory.cpp) and the backend (backend/managed_batches.cpp):
//   u64 stream, u64 flags, u64 count (at most kMaxManagedBatch), count times {u64 address,
//   u64 bytes}, u64 locations (at most count; 0 for a discard), locations times {a cudaMemLocation
//   (sizeof bytes), u64 the index of the first range it applies to}.
// Sent ahead; the reply is the i32 result. Every range is vetted as the session's device memory
// before the runtime sees it, which judges the rest (the stream, the flags, the indexes' order).
#pragma once

#include <cstdint>

namespace gvirtus::cudart {

inline constexpr uint64_t kMaxManagedBatch = 4096;

}  // namespace gvirtus::cudart

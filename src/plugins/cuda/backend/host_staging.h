// Staging blocks for graph copies of the client's own memory (host_staging.cpp). A copy node or a
// captured copy whose host side is the application's ordinary memory cannot reach that memory
// when the graph runs on the backend: the stub makes it a copy of a staging block here instead,
// beside a host function of its own that moves the bytes between the block and the application's
// memory at that moment (frontend/host_staging.h). The rows (gvirtus's own, 331-333):
//   gvirtusStagingAlloc  u64 bytes. Reply: i32 result, u64 the block's device address. Page-locked
//                        and mapped, its device range the session's for every other call; it
//                        lives as long as the session (its worker process). At most
//                        kMaxStagingBytes per session: beyond, CUDA_ERROR_OUT_OF_MEMORY, logged;
//                        0 bytes: CUDA_ERROR_INVALID_VALUE.
//   gvirtusStagingWrite  u64 device address, u64 bytes, the bytes (sent ahead): into a block.
//   gvirtusStagingRead   u64 device address, u64 bytes. Reply: i32 result, blob.
// A write or read outside every block (one range inside one block, at most kCopyChunkBytes) is
// malformed: no stub sends it. Both are plain memory copies, never driver calls: they come from
// the stub's callback thread while a stream waits for that host function, and a driver call
// could wait for that very stream.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

inline constexpr uint64_t kMaxStagingBytes = uint64_t{1} << 30;

// The three rows; false if `fn` is none of them.
bool run_host_staging(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

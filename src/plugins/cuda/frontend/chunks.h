// The host side of the driver stub's copies travels in chunks of at most kCopyChunkBytes
// (common/driver_wire.h), so no frame approaches the frame limit: the loop and the landing of a
// chunk's reply, shared by the linear and the array copies.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/error.h"
#include "common/wire.h"
#include "frontend/process_session.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

// Runs `step(done, chunk)` over [0, bytes) in chunks, stopping at the first failure.
template <typename Step>
CUresult in_chunks(size_t bytes, Step step) {
  for (size_t done = 0; done < bytes;) {
    const size_t chunk = std::min(kCopyChunkBytes, bytes - done);
    if (const CUresult result = step(done, chunk); result != CUDA_SUCCESS) return result;
    done += chunk;
  }
  return CUDA_SUCCESS;
}

// Where a chunk's reply may land directly: the client's memory at `to`, after the status (i32)
// and the blob's length (u64).
inline process_session::Landing chunk_landing(std::byte* to, size_t chunk) {
  return {to, chunk, sizeof(int32_t) + sizeof(uint64_t), 0};
}

// A chunk's reply into the client's memory at `to` (a failure brings no data); `landed`: its
// bytes are there already (chunk_landing), only their count is left to check.
inline void land_chunk(WireReader& r, std::byte* to, size_t chunk, bool landed = false) {
  if (r.remaining() == 0) return;
  if (landed) {
    if (r.get<uint64_t>() != chunk) raise(ErrorKind::kInvalidInput, "short copy reply");
    return;
  }
  const auto data = r.get_blob(chunk);
  std::copy(data.begin(), data.end(), to);
}

}  // namespace gvirtus::cuda

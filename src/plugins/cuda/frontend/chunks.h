// The host side of the driver stub's copies travels in chunks of at most kCopyChunkBytes
// (common/driver_wire.h), so no frame approaches the frame limit: the loop and the landing of a
// chunk's reply, shared by the linear and the array copies.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstddef>

#include "common/wire.h"
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

// A chunk's reply into the client's memory at `to` (a failure brings no data).
inline void land_chunk(WireReader& r, std::byte* to, size_t chunk) {
  if (r.remaining() == 0) return;
  const auto data = r.get_blob(chunk);
  std::copy(data.begin(), data.end(), to);
}

}  // namespace gvirtus::cuda

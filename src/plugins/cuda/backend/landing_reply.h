// A reply whose data lands in place (the device-to-host copies of the cuda plugin): the reply's
// own space is the buffer the driver copies into, so no bytes are copied twice.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "common/wire.h"

namespace gvirtus::cuda {

// Writes i32 `result`, then, when it is a success, a blob of `bytes` that `fill(landing)` writes
// into the reply, returning the call's result, which becomes the reply's status; nothing follows a
// failure.
template <typename Fill>
void landing_reply(WireWriter& out, CUresult& result, uint64_t bytes, Fill fill) {
  const size_t at = out.size();
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) return;
  out.put<uint64_t>(bytes);
  result = fill(out.put_space(bytes));
  out.store_at<int32_t>(at, result);
  if (result != CUDA_SUCCESS) out.truncate(at + sizeof(int32_t));
}

}  // namespace gvirtus::cuda

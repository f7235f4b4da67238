// The per-thread default stream in the hand-written _ptsz forms of the client libcuda.so.1 (the
// generated ones do the same: tools/gen/gen_exports.py): a null stream is the calling thread's
// own.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

inline CUstream per_thread(CUstream stream) {
  return stream == nullptr ? CU_STREAM_PER_THREAD : stream;
}

}  // namespace gvirtus::cuda

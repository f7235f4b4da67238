// The bytes of one channel of a CUDA array format, for every side that counts an array's bytes:
// the stub (batches of 3D copies), the backend (pitched texture resources) and the simulated
// device (its arrays, the 1D linear texture limit). The formats of whole-byte channels only; 0
// for the others (block-compressed, planar and packed video formats), which callers refuse or
// treat apart.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace gvirtus::cuda {

constexpr size_t channel_bytes(int format) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      return 4;
    default:
      return 0;
  }
}

}  // namespace gvirtus::cuda

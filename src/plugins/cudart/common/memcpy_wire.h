// cudaMemcpy on the wire (a custom row of cudart_calls.txt).
//
// Request: u64 dst, u64 src, u64 count, i32 kind, [u64 stream for the cudaMemcpyAsync rows], then
// for host-to-device and host-to-host the count bytes of source data. Reply: i32 result, then for
// device-to-host and host-to-host a blob with the copied bytes. Copies larger than
// kMemcpyChunkBytes travel as several calls, one chunk each, so no frame approaches the frame limit
// and neither side buffers a whole large copy.
#pragma once

#include <cstddef>

namespace gvirtus::cudart {

inline constexpr size_t kMemcpyChunkBytes = size_t{16} << 20;

}  // namespace gvirtus::cudart

// cudaMemcpy and cudaMemcpy2D on the wire (custom rows of cudart_calls.txt): each request starts
// with its record, defined once here for the stub and the backend (common/wire_record.h).
//
//   cudaMemcpy, cudaMemcpyAsync      MemcpyRequest, then for host-to-device and host-to-host the
//                                    count bytes of source data. Reply: i32 result, then for
//                                    device-to-host and host-to-host a blob with the copied
//                                    bytes (nothing after a failure).
//   cudaMemcpy2D, cudaMemcpy2DAsync  Memcpy2DRequest, then for host-to-device the rows packed
//                                    (width bytes each; a host-side pitch travels as width).
//                                    Reply: i32 result, then for device-to-host a blob with the
//                                    rows packed (nothing after a failure).
// The synchronous rows carry a null stream (one record for both); a stream on them is malformed.
// Copies larger than kMemcpyChunkBytes travel as several calls, one chunk each (whole rows for 2D
// copies), so no frame approaches the frame limit and neither side buffers a whole large copy.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>

#include "common/error.h"

namespace gvirtus::cudart {

inline constexpr size_t kMemcpyChunkBytes = size_t{16} << 20;

struct MemcpyRequest {
  void* dst;
  const void* src;
  uint64_t count;
  cudaMemcpyKind kind;
  cudaStream_t stream;
  static constexpr auto kFields =
      std::tuple{&MemcpyRequest::dst, &MemcpyRequest::src, &MemcpyRequest::count,
                 &MemcpyRequest::kind, &MemcpyRequest::stream};
};

struct Memcpy2DRequest {
  void* dst;
  uint64_t dpitch;
  const void* src;
  uint64_t spitch;
  uint64_t width;
  uint64_t height;
  cudaMemcpyKind kind;
  cudaStream_t stream;
  static constexpr auto kFields =
      std::tuple{&Memcpy2DRequest::dst,    &Memcpy2DRequest::dpitch, &Memcpy2DRequest::src,
                 &Memcpy2DRequest::spitch, &Memcpy2DRequest::width,  &Memcpy2DRequest::height,
                 &Memcpy2DRequest::kind,   &Memcpy2DRequest::stream};
};

// The backend's reading of a copy record's stream: a synchronous row's must be null (no stub
// sends another), so one naming a stream is malformed.
inline cudaStream_t request_stream(cudaStream_t stream, bool with_stream, const char* call) {
  if (!with_stream && stream != nullptr) {
    raise(ErrorKind::kInvalidInput, std::string("a stream on ") + call);
  }
  return stream;
}

}  // namespace gvirtus::cudart

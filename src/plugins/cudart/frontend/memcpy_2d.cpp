// cudaMemcpy2D / cudaMemcpy2DAsync (custom rows 62-64 of cudart_calls.txt). The host side's rows
// travel packed (width bytes each, the host pitch is the client's business); the device side's
// pitch travels as given and the backend's runtime validates it. Copies larger than
// kMemcpyChunkBytes travel as several calls of whole rows; rows larger than that as 1D copies.
#include <algorithm>
#include <cstring>

#include "common/wire_record.h"
#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/frontend/host_staging.h"
#include "plugins/cudart/frontend/memcpy_kind.h"
#include "plugins/cudart/frontend/stream_capture.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct Copy2D {
  char* dst;
  size_t dpitch;
  const char* src;
  size_t spitch;
  size_t width;
  size_t height;
  cudaMemcpyKind kind;
};

cudaError_t send_rows(const Copy2D& c, const cudaStream_t* stream) {
  auto encode = [&](WireWriter& w) {
    put_record(w, Memcpy2DRequest{c.dst, host_is_destination(c.kind) ? c.width : c.dpitch, c.src,
                                  host_is_source(c.kind) ? c.width : c.spitch, c.width, c.height,
                                  c.kind, stream != nullptr ? *stream : nullptr});
    if (host_is_source(c.kind)) {
      std::byte* packed = w.put_space(c.width * c.height);
      for (size_t row = 0; row < c.height; ++row) {
        std::memcpy(packed + row * c.width, c.src + row * c.spitch, c.width);
      }
    }
  };
  auto decode = [&](WireReader& r) {
    if (!host_is_destination(c.kind) || r.remaining() == 0) return;  // nothing after a failure
    const auto packed = r.get_blob(c.width * c.height);
    if (packed.size() != c.width * c.height) raise(ErrorKind::kInvalidInput, "short 2D reply");
    for (size_t row = 0; row < c.height; ++row) {
      std::memcpy(c.dst + row * c.dpitch, packed.data() + row * c.width, c.width);
    }
  };
  if (stream == nullptr) return remote_sync(Fn::cudaMemcpy2D, encode, decode);
  if (host_is_destination(c.kind)) return remote_sync(Fn::cudaMemcpy2DAsync, encode, decode);
  return remote_async(Fn::cudaMemcpy2DAsync, encode);
}

cudaError_t copy_2d(Copy2D c, const cudaStream_t* stream) {
  if (!kind_in_range(c.kind)) return cudaErrorInvalidMemcpyDirection;
  c.kind = resolve_kind(c.kind, c.dst, c.src);
  if (c.height > 0) {
    const cudaError_t rc = check_host_side(c.dst, c.src, c.width, c.kind);
    if (rc != cudaSuccess) return rc;
  }
  // A capturing stream takes a copy of the client's memory as a copy node, between host memory
  // too (host_staging.h).
  if (stream != nullptr && c.kind != cudaMemcpyDeviceToDevice && capturing(*stream)) {
    if (c.width == 0 || c.height == 0) return cudaSuccess;
    cudaMemcpy3DParms box{};
    box.srcPtr = cudaPitchedPtr{const_cast<char*>(c.src), c.spitch, c.width, c.height};
    box.dstPtr = cudaPitchedPtr{c.dst, c.dpitch, c.width, c.height};
    box.extent = cudaExtent{c.width, c.height, 1};
    box.kind = c.kind;
    return capture_copy_node(*stream, box);
  }
  if (c.kind == cudaMemcpyHostToHost) {
    // Nothing for the GPU to do, but the runtime still checks its pitches and initialisation.
    if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) return init;
    if (c.width > c.dpitch || c.width > c.spitch) {
      return record_local_error(cudaErrorInvalidPitchValue);
    }
    for (size_t row = 0; row < c.height; ++row) {
      std::memmove(c.dst + row * c.dpitch, c.src + row * c.spitch, c.width);
    }
    return cudaSuccess;
  }
  const size_t host_pitch = host_is_source(c.kind) ? c.spitch : c.dpitch;
  const bool host_side = host_is_source(c.kind) || host_is_destination(c.kind);
  if (host_side && c.width > host_pitch && c.height > 1) {
    if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) return init;
    return record_local_error(cudaErrorInvalidPitchValue);
  }
  if (c.width == 0 || c.height == 0 || c.width * c.height <= kMemcpyChunkBytes) {
    return send_rows(c, stream);
  }
  if (c.width > kMemcpyChunkBytes) {  // rows too large for one frame: row by row, chunked
    for (size_t row = 0; row < c.height; ++row) {
      char* dst = c.dst + row * c.dpitch;
      const char* src = c.src + row * c.spitch;
      const cudaError_t rc = stream != nullptr ? cudaMemcpyAsync(dst, src, c.width, c.kind, *stream)
                                               : cudaMemcpy(dst, src, c.width, c.kind);
      if (rc != cudaSuccess) return rc;
    }
    return cudaSuccess;
  }
  const size_t rows_per_chunk = kMemcpyChunkBytes / c.width;
  for (size_t row = 0; row < c.height; row += rows_per_chunk) {
    Copy2D part = c;
    part.dst = c.dst + row * c.dpitch;
    part.src = c.src + row * c.spitch;
    part.height = std::min(rows_per_chunk, c.height - row);
    if (const cudaError_t rc = send_rows(part, stream); rc != cudaSuccess) return rc;
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace gvirtus::cudart

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src,
                                               size_t spitch, size_t width, size_t height,
                                               cudaMemcpyKind kind) {
  return gvirtus::cudart::copy_2d(
      {static_cast<char*>(dst), dpitch, static_cast<const char*>(src), spitch, width, height, kind},
      nullptr);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src,
                                                    size_t spitch, size_t width, size_t height,
                                                    cudaMemcpyKind kind, cudaStream_t stream) {
  return gvirtus::cudart::copy_2d(
      {static_cast<char*>(dst), dpitch, static_cast<const char*>(src), spitch, width, height, kind},
      &stream);
}

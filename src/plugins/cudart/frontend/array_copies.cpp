// Copies between CUDA arrays and linear memory: cudaMemcpy2DToArray, cudaMemcpy2DFromArray, their
// Async forms, and the deprecated 1D cudaMemcpyToArray / cudaMemcpyFromArray (custom rows 165-168;
// the layout: common/array_wire.h).
//
// The host side's rows travel packed; when they already lie packed in the application's memory
// they go from there and land there, with no copy in between (as cudaMemcpy's chunks do). Copies
// larger than kMemcpyChunkBytes travel as several calls of whole rows, one after the other: an
// array copy is bounded by the array (a 2D array's row is at most 64 Ki texels of 16 bytes), so
// pipelining them is not worth its bookkeeping. A 1D copy beyond one chunk asks the backend for
// the array's row length once, to move its offsets on row by row.
#include <algorithm>
#include <cstring>

#include "common/wire_record.h"
#include "plugins/cudart/common/array_wire.h"
#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/frontend/array_info.h"
#include "plugins/cudart/frontend/host_staging.h"
#include "plugins/cudart/frontend/memcpy_kind.h"
#include "plugins/cudart/frontend/stream_capture.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct ArrayCopy {
  cudaArray_t array;
  size_t w_offset;
  size_t h_offset;
  char* linear;  // the source (to the array) or the destination (from it)
  size_t pitch;  // the linear side's
  size_t width;
  size_t height;
  bool linear_bytes;  // the 1D forms
  bool to_array;
  cudaMemcpyKind kind;
  const cudaStream_t* stream;  // present for the Async forms

  bool host_source() const { return to_array && kind == cudaMemcpyHostToDevice; }
  bool host_destination() const { return !to_array && kind == cudaMemcpyDeviceToHost; }
  bool host_side() const { return host_source() || host_destination(); }
  bool packed() const { return pitch == width || height <= 1; }
  size_t bytes() const { return width * height; }

  Fn fn() const {
    if (to_array) return stream != nullptr ? Fn::cudaMemcpy2DToArrayAsync : Fn::cudaMemcpy2DToArray;
    return stream != nullptr ? Fn::cudaMemcpy2DFromArrayAsync : Fn::cudaMemcpy2DFromArray;
  }

  void encode(WireWriter& w) const {
    // The linear side goes by name only when it is device memory (see array_wire.h).
    void* device = kind == cudaMemcpyDeviceToDevice ? linear : nullptr;
    put_record(w, ArrayCopyRequest{array, w_offset, h_offset, device, host_side() ? width : pitch,
                                   width, height, linear_bytes ? 1u : 0u, kind,
                                   stream != nullptr ? *stream : nullptr});
    if (!host_source() || packed()) return;  // packed rows follow as the request's data
    std::byte* rows = w.put_space(bytes());
    for (size_t row = 0; row < height; ++row) {
      std::memcpy(rows + row * width, linear + row * pitch, width);
    }
  }
  ByteView data() const {
    if (!host_source() || !packed()) return {};
    return {reinterpret_cast<const std::byte*>(linear), bytes()};
  }
  void decode(WireReader& r, bool landed) const {
    if (!host_destination() || r.remaining() == 0) return;  // no data after a failure
    if (landed) {
      if (r.get<uint64_t>() != bytes()) raise(ErrorKind::kInvalidInput, "short array copy reply");
      return;
    }
    const auto rows = r.get_blob(bytes());
    if (rows.size() != bytes()) raise(ErrorKind::kInvalidInput, "short array copy reply");
    for (size_t row = 0; row < height; ++row) {
      std::memcpy(linear + row * pitch, rows.data() + row * width, width);
    }
  }

  cudaError_t send() const {
    process_session::Landing landing{linear, bytes(), sizeof(int32_t) + sizeof(uint64_t), 0};
    const bool lands = host_destination() && packed() && bytes() > 0;
    const RemotePending sent = remote_begin(
        fn(), [&](WireWriter& w) { encode(w); }, data(), lands ? &landing : nullptr);
    return remote_finish(sent, [&](WireReader& r) { decode(r, landing.landed != 0); });
  }
};

// A 1D copy of more than one chunk: chunks of whole rows' worth of bytes where the row allows,
// each from where the previous ended in the array's row order.
cudaError_t copy_bytes_in_chunks(ArrayCopy c) {
  const size_t row_bytes = array_row_bytes(c.array);
  if (row_bytes == 0) return c.send();  // the backend's runtime answers, as for any bad array
  size_t done = 0;
  const size_t total = c.width;
  while (done < total) {
    ArrayCopy part = c;
    const size_t at = c.h_offset * row_bytes + c.w_offset + done;
    part.w_offset = at % row_bytes;
    part.h_offset = at / row_bytes;
    part.width = std::min(kMemcpyChunkBytes, total - done);
    part.pitch = part.width;
    part.linear = c.linear + done;
    if (const cudaError_t rc = part.send(); rc != cudaSuccess) return rc;
    done += part.width;
  }
  return cudaSuccess;
}

cudaError_t copy_rows_in_chunks(const ArrayCopy& c) {
  if (c.width > kMemcpyChunkBytes) {  // rows too large for one frame: each in pieces of bytes
    for (size_t row = 0; row < c.height; ++row) {
      for (size_t done = 0; done < c.width; done += kMemcpyChunkBytes) {
        ArrayCopy part = c;
        part.w_offset = c.w_offset + done;
        part.h_offset = c.h_offset + row;
        part.linear = c.linear + row * c.pitch + done;
        part.width = std::min(kMemcpyChunkBytes, c.width - done);
        part.pitch = part.width;
        part.height = 1;
        if (const cudaError_t rc = part.send(); rc != cudaSuccess) return rc;
      }
    }
    return cudaSuccess;
  }
  const size_t rows_per_chunk = kMemcpyChunkBytes / c.width;
  for (size_t row = 0; row < c.height; row += rows_per_chunk) {
    ArrayCopy part = c;
    part.h_offset = c.h_offset + row;
    part.linear = c.linear + row * c.pitch;
    part.height = std::min(rows_per_chunk, c.height - row);
    if (const cudaError_t rc = part.send(); rc != cudaSuccess) return rc;
  }
  return cudaSuccess;
}

// A copy between an array and the client's memory on a capturing stream: the 2D forms as the one
// copy node of a 3D copy (host_staging.h: staged, so each launch reads or writes the program's
// memory as it is then), their byte offsets and width in the array's elements; the 1D forms'
// offsets in the array's row order have no such node: refused as what a capture cannot hold.
cudaError_t capture(const ArrayCopy& c) {
  if (c.linear_bytes) {
    if (const auto refused = refuse_in_capture(*c.stream)) return *refused;
    return record_local_error(cudaErrorStreamCaptureUnsupported);
  }
  size_t element = 0;
  if (const cudaError_t rc = countable_element_bytes(c.array, element); rc != cudaSuccess) {
    return rc;
  }
  if (c.w_offset % element != 0 || c.width % element != 0) {
    return record_local_error(cudaErrorInvalidValue);
  }
  const cudaPitchedPtr linear{c.linear, std::max(c.pitch, c.width), c.width, c.height};
  const cudaPos at{c.w_offset / element, c.h_offset, 0};
  cudaMemcpy3DParms p{};
  if (c.to_array) {
    p.srcPtr = linear, p.dstArray = c.array, p.dstPos = at;
  } else {
    p.srcArray = c.array, p.srcPos = at, p.dstPtr = linear;
  }
  p.extent = cudaExtent{c.width / element, c.height, 1};
  p.kind = c.kind;
  return capture_copy_node(*c.stream, p);
}

cudaError_t copy(ArrayCopy c) {
  if (!kind_in_range(c.kind)) return cudaErrorInvalidMemcpyDirection;
  if (c.kind == cudaMemcpyDefault) {
    // The array is device memory; the linear side is what the stub's records say it is.
    if (is_device_pointer(c.linear)) {
      c.kind = cudaMemcpyDeviceToDevice;
    } else {
      c.kind = c.to_array ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    }
  }
  if (c.host_side() && c.bytes() > 0) {
    const cudaError_t rc = check_host_side(c.to_array ? nullptr : c.linear,
                                           c.to_array ? c.linear : nullptr, c.bytes(), c.kind);
    if (rc != cudaSuccess) return rc;
    if (c.width > c.pitch && c.height > 1) return refuse_locally(cudaErrorInvalidPitchValue);
    if (c.stream != nullptr && capturing(*c.stream)) return capture(c);
  }
  if (!c.host_side() || c.bytes() <= kMemcpyChunkBytes) return c.send();
  return c.linear_bytes ? copy_bytes_in_chunks(c) : copy_rows_in_chunks(c);
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset,
                                                      size_t hOffset, const void* src,
                                                      size_t spitch, size_t width, size_t height,
                                                      cudaMemcpyKind kind) {
  return cr::copy({dst, wOffset, hOffset, const_cast<char*>(static_cast<const char*>(src)), spitch,
                   width, height, false, true, kind, nullptr});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset,
                                                           size_t hOffset, const void* src,
                                                           size_t spitch, size_t width,
                                                           size_t height, cudaMemcpyKind kind,
                                                           cudaStream_t stream) {
  return cr::copy({dst, wOffset, hOffset, const_cast<char*>(static_cast<const char*>(src)), spitch,
                   width, height, false, true, kind, &stream});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch,
                                                        cudaArray_const_t src, size_t wOffset,
                                                        size_t hOffset, size_t width, size_t height,
                                                        cudaMemcpyKind kind) {
  return cr::copy({const_cast<cudaArray_t>(src), wOffset, hOffset, static_cast<char*>(dst), dpitch,
                   width, height, false, false, kind, nullptr});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch,
                                                             cudaArray_const_t src, size_t wOffset,
                                                             size_t hOffset, size_t width,
                                                             size_t height, cudaMemcpyKind kind,
                                                             cudaStream_t stream) {
  return cr::copy({const_cast<cudaArray_t>(src), wOffset, hOffset, static_cast<char*>(dst), dpitch,
                   width, height, false, false, kind, &stream});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                                    const void* src, size_t count,
                                                    cudaMemcpyKind kind) {
  return cr::copy({dst, wOffset, hOffset, const_cast<char*>(static_cast<const char*>(src)), count,
                   count, 1, true, true, kind, nullptr});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset,
                                                         size_t hOffset, const void* src,
                                                         size_t count, cudaMemcpyKind kind,
                                                         cudaStream_t stream) {
  return cr::copy({dst, wOffset, hOffset, const_cast<char*>(static_cast<const char*>(src)), count,
                   count, 1, true, true, kind, &stream});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src,
                                                      size_t wOffset, size_t hOffset, size_t count,
                                                      cudaMemcpyKind kind) {
  return cr::copy({const_cast<cudaArray_t>(src), wOffset, hOffset, static_cast<char*>(dst), count,
                   count, 1, true, false, kind, nullptr});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src,
                                                           size_t wOffset, size_t hOffset,
                                                           size_t count, cudaMemcpyKind kind,
                                                           cudaStream_t stream) {
  return cr::copy({const_cast<cudaArray_t>(src), wOffset, hOffset, static_cast<char*>(dst), count,
                   count, 1, true, false, kind, &stream});
}

// cudaMemcpy3D, cudaMemcpy3DAsync and their peer forms (custom rows 177-180; the layout:
// common/array_wire.h's Memcpy3DRequest).
//
// Each side is an array or a pitched pointer. A host side's rows travel packed: the stub gathers
// them from (or scatters them into) the application's pitched memory at its position. Their
// length is the extent's width in bytes, or in elements of the array on the other side (asked
// of the backend once per copy: array_info.h), which also counts the position's x on the host
// side, as the runtime counts it. Copies with more than kMemcpyChunkBytes on a host
// side travel as several calls of whole slices, or of whole rows of one slice, one after the
// other. Host-to-host copies without an array are done here, as the runtime does them. On a
// capturing stream, a copy of pitched host memory becomes a staged copy node of the capture's
// graph, as cudaMemcpyAsync's does (host_staging.h).
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

// One side of a copy, as cudaMemcpy3DParms has it.
struct Side {
  cudaArray_t array;
  cudaPos pos;
  cudaPitchedPtr ptr;
  int device;

  // The address of row `y` of slice `z` of the copy, on a pointer side.
  char* row(size_t y, size_t z) const {
    return static_cast<char*>(ptr.ptr) + (pos.z + z) * ptr.pitch * ptr.ysize +
           (pos.y + y) * ptr.pitch + pos.x;
  }
};

struct Copy3D {
  Side src;
  Side dst;
  cudaExtent extent;
  cudaMemcpyKind kind;
  bool peer;
  size_t host_row;             // the host side's row length, 0 without a host side
  const cudaStream_t* stream;  // present for the Async forms

  bool host_source() const { return host_row != 0 && kind == cudaMemcpyHostToDevice; }
  bool host_destination() const { return host_row != 0 && kind == cudaMemcpyDeviceToHost; }
  size_t host_bytes() const { return host_row * extent.height * extent.depth; }

  Fn fn() const {
    if (peer) return stream != nullptr ? Fn::cudaMemcpy3DPeerAsync : Fn::cudaMemcpy3DPeer;
    return stream != nullptr ? Fn::cudaMemcpy3DAsync : Fn::cudaMemcpy3D;
  }

  void encode(WireWriter& w) const {
    // A host side travels as bytes: no address, no position.
    const Side s = host_source()
                       ? Side{nullptr, {}, {nullptr, host_row, host_row, extent.height}, src.device}
                       : src;
    const Side d = host_destination()
                       ? Side{nullptr, {}, {nullptr, host_row, host_row, extent.height}, dst.device}
                       : dst;
    put_record(w,
               Memcpy3DRequest{
                   s.array,      s.pos.x,     s.pos.y,      s.pos.z,
                   s.ptr.ptr,    s.ptr.pitch, s.ptr.xsize,  s.ptr.ysize,
                   s.device,     d.array,     d.pos.x,      d.pos.y,
                   d.pos.z,      d.ptr.ptr,   d.ptr.pitch,  d.ptr.xsize,
                   d.ptr.ysize,  d.device,    extent.width, extent.height,
                   extent.depth, host_row,    kind,         stream != nullptr ? *stream : nullptr});
    if (!host_source()) return;
    std::byte* packed = w.put_space(host_bytes());
    for (size_t z = 0; z < extent.depth; ++z) {
      for (size_t y = 0; y < extent.height; ++y) {
        std::memcpy(packed + (z * extent.height + y) * host_row, src.row(y, z), host_row);
      }
    }
  }
  void decode(WireReader& r) const {
    if (!host_destination() || r.remaining() == 0) return;  // no data after a failure
    const auto packed = r.get_blob(host_bytes());
    if (packed.size() != host_bytes()) raise(ErrorKind::kInvalidInput, "short 3D copy reply");
    for (size_t z = 0; z < extent.depth; ++z) {
      for (size_t y = 0; y < extent.height; ++y) {
        std::memcpy(dst.row(y, z), packed.data() + (z * extent.height + y) * host_row, host_row);
      }
    }
  }
  cudaError_t send() const {
    return remote_sync(
        fn(), [&](WireWriter& w) { encode(w); }, [&](WireReader& r) { decode(r); });
  }
};

// Moves a side `y` rows and `z` slices on, and `x_bytes` along its rows (pointer sides only).
void advance(Side& side, size_t y, size_t z, size_t x_bytes) {
  side.pos.y += y;
  side.pos.z += z;
  if (side.array == nullptr) side.pos.x += x_bytes;
}

cudaError_t send_in_chunks(const Copy3D& c) {
  const size_t slice = c.host_row * c.extent.height;
  if (slice != 0 && slice <= kMemcpyChunkBytes) {  // whole slices
    const size_t per_chunk = kMemcpyChunkBytes / slice;
    for (size_t z = 0; z < c.extent.depth; z += per_chunk) {
      Copy3D part = c;
      advance(part.src, 0, z, 0);
      advance(part.dst, 0, z, 0);
      part.extent.depth = std::min(per_chunk, c.extent.depth - z);
      if (const cudaError_t rc = part.send(); rc != cudaSuccess) return rc;
    }
    return cudaSuccess;
  }
  if (c.host_row <= kMemcpyChunkBytes) {  // whole rows, slice by slice
    const size_t per_chunk = kMemcpyChunkBytes / c.host_row;
    for (size_t z = 0; z < c.extent.depth; ++z) {
      for (size_t y = 0; y < c.extent.height; y += per_chunk) {
        Copy3D part = c;
        advance(part.src, y, z, 0);
        advance(part.dst, y, z, 0);
        part.extent.height = std::min(per_chunk, c.extent.height - y);
        part.extent.depth = 1;
        if (const cudaError_t rc = part.send(); rc != cudaSuccess) return rc;
      }
    }
    return cudaSuccess;
  }
  // Rows longer than a chunk: only linear memory has them (an array's row is at most 256 KiB),
  // so the width is in bytes and a row goes in pieces.
  for (size_t z = 0; z < c.extent.depth; ++z) {
    for (size_t y = 0; y < c.extent.height; ++y) {
      for (size_t x = 0; x < c.host_row; x += kMemcpyChunkBytes) {
        Copy3D part = c;
        advance(part.src, y, z, x);
        advance(part.dst, y, z, x);
        part.extent = {std::min(kMemcpyChunkBytes, c.host_row - x), 1, 1};
        part.host_row = part.extent.width;
        if (const cudaError_t rc = part.send(); rc != cudaSuccess) return rc;
      }
    }
  }
  return cudaSuccess;
}

// The copy as cudaMemcpy3DParms (a graph's copy node takes it so).
cudaMemcpy3DParms parameters(const Copy3D& c) {
  cudaMemcpy3DParms p{};
  p.srcArray = c.src.array;
  p.srcPos = c.src.pos;
  p.srcPtr = c.src.ptr;
  p.dstArray = c.dst.array;
  p.dstPos = c.dst.pos;
  p.dstPtr = c.dst.ptr;
  p.extent = c.extent;
  p.kind = c.kind;
  return p;
}

// A host-to-host copy between pitched pointers, done here as the runtime does it.
cudaError_t copy_on_host(const Copy3D& c) {
  if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) return init;
  if (c.src.ptr.ptr == nullptr || c.dst.ptr.ptr == nullptr) {
    return record_local_error(cudaErrorInvalidValue);
  }
  for (size_t z = 0; z < c.extent.depth; ++z) {
    for (size_t y = 0; y < c.extent.height; ++y) {
      std::memmove(c.dst.row(y, z), c.src.row(y, z), c.extent.width);
    }
  }
  return cudaSuccess;
}

cudaError_t copy(Copy3D c) {
  if (!kind_in_range(c.kind)) return cudaErrorInvalidMemcpyDirection;
  auto on_device = [](const Side& s) { return s.array != nullptr || is_device_pointer(s.ptr.ptr); };
  if (c.kind == cudaMemcpyDefault) {
    const bool from_device = on_device(c.src), to_device = on_device(c.dst);
    if (from_device) {
      c.kind = to_device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
    } else {
      c.kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost;
    }
  }
  const bool host_to_host =
      c.kind == cudaMemcpyHostToHost && c.src.array == nullptr && c.dst.array == nullptr;
  Side* host = nullptr;
  const Side* other = nullptr;
  if (c.kind == cudaMemcpyHostToDevice && c.src.array == nullptr) {
    host = &c.src;
    other = &c.dst;
  } else if (c.kind == cudaMemcpyDeviceToHost && c.dst.array == nullptr) {
    host = &c.dst;
    other = &c.src;
  }
  // A capturing stream takes a copy of the client's memory as one node of the capture's graph
  // (host_staging.h): staged through a block on the backend, an array on the other side too, or,
  // between host memory, the stub's host function copying here - so the graph reads or writes the
  // program's memory each time it runs, never a copy of the backend's transient buffer.
  if ((host_to_host || host != nullptr) && c.stream != nullptr && capturing(*c.stream)) {
    if (c.extent.width == 0 || c.extent.height == 0 || c.extent.depth == 0) return cudaSuccess;
    return capture_copy_node(*c.stream, parameters(c));
  }
  if (host_to_host) return copy_on_host(c);
  if (host == nullptr) return c.send();  // no host side: the backend names both
  if (c.extent.width == 0 || c.extent.height == 0 || c.extent.depth == 0) {
    return c.send();  // nothing travels: the runtime judges the rest
  }
  if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) return init;
  if (host->ptr.ptr == nullptr) return record_local_error(cudaErrorInvalidValue);
  size_t element = 1;
  if (other->array != nullptr) {
    if (const cudaError_t rc = countable_element_bytes(other->array, element); rc != cudaSuccess) {
      return rc;
    }
    // With an array taking part, the pointer side's position x counts the array's elements too:
    // the runtime hands the driver x times the element's bytes.
    host->pos.x *= element;
  }
  c.host_row = c.extent.width * element;
  if (c.host_row > host->ptr.pitch && (c.extent.height > 1 || c.extent.depth > 1)) {
    return record_local_error(cudaErrorInvalidPitchValue);
  }
  if (c.host_bytes() <= kMemcpyChunkBytes) return c.send();
  return send_in_chunks(c);
}

Side side(cudaArray_t array, const cudaPos& pos, const cudaPitchedPtr& ptr, int device) {
  return {array, pos, ptr, device};
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  if (p == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  return cr::copy({cr::side(p->srcArray, p->srcPos, p->srcPtr, -1),
                   cr::side(p->dstArray, p->dstPos, p->dstPtr, -1), p->extent, p->kind, false, 0,
                   nullptr});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p,
                                                    cudaStream_t stream) {
  if (p == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  return cr::copy({cr::side(p->srcArray, p->srcPos, p->srcPtr, -1),
                   cr::side(p->dstArray, p->dstPos, p->dstPtr, -1), p->extent, p->kind, false, 0,
                   &stream});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy3DPeer(const cudaMemcpy3DPeerParms* p) {
  if (p == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  return cr::copy({cr::side(p->srcArray, p->srcPos, p->srcPtr, p->srcDevice),
                   cr::side(p->dstArray, p->dstPos, p->dstPtr, p->dstDevice), p->extent,
                   cudaMemcpyDeviceToDevice, true, 0, nullptr});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy3DPeerAsync(const cudaMemcpy3DPeerParms* p,
                                                        cudaStream_t stream) {
  if (p == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  return cr::copy({cr::side(p->srcArray, p->srcPos, p->srcPtr, p->srcDevice),
                   cr::side(p->dstArray, p->dstPos, p->dstPtr, p->dstDevice), p->extent,
                   cudaMemcpyDeviceToDevice, true, 0, &stream});
}

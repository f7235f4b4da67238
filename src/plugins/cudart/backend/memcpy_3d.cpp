// cudaMemcpy3D and its Async and peer forms (wire: common/array_wire.h's Memcpy3DRequest).
//
// Arrays must be the session's; a pointer side must lie in the session's memory over the whole
// extent the copy reaches (from its first row to the end of its last, slices `pitch * ysize`
// apart), counted in bytes with the element size of the array taking part, as the runtime counts
// them. A host side is a buffer of ours: the request's data, or the reply. The runtime judges the
// rest (positions against the arrays' extents, pitches, devices).
#include "plugins/cudart/backend/memcpy_3d.h"

#include <string>

#include "backend/services/rejections.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/array_wire.h"
#include "plugins/cudart/common/marshal.h"
#include "plugins/cudart/common/memcpy_wire.h"

namespace gvirtus::cudart {
namespace {

constexpr uint64_t kUnknown = UINT64_MAX;

// The bytes one element of `array` takes, by the runtime's account (0 for a format without
// whole-byte elements, kUnknown when the runtime cannot say).
uint64_t element_bytes(cudaArray_t array) {
  cudaChannelFormatDesc desc{};
  cudaExtent extent{};
  unsigned flags = 0;
  if (::cudaArrayGetInfo(&desc, &extent, &flags, array) != cudaSuccess) return kUnknown;
  return channel_element_bytes(desc);
}

// The bytes from a pointer side's first byte the copy reaches to its last, counted from `base`
// (the side's pointer) in `first` and `span`; false when they overflow.
// With an array taking part the runtime counts x in its elements: the span reaches to x elements
// past the rows' start (a superset of x bytes).
bool reach(const Memcpy3DRequest& r, bool source, uint64_t element, uint64_t row_bytes,
           uint64_t& first, uint64_t& span) {
  const uint64_t x = source ? r.src_x : r.dst_x, y = source ? r.src_y : r.dst_y,
                 z = source ? r.src_z : r.dst_z;
  const unsigned __int128 pitch = source ? r.src_pitch : r.dst_pitch;
  const unsigned __int128 slice = pitch * (source ? r.src_ysize : r.dst_ysize);
  const unsigned __int128 start = z * slice + y * pitch + x;
  const unsigned __int128 end = (z + r.depth - 1) * slice + (y + r.height - 1) * pitch +
                                static_cast<unsigned __int128>(x) * element + row_bytes;
  if (end > UINT64_MAX) return false;
  first = static_cast<uint64_t>(start);
  span = static_cast<uint64_t>(end - start);
  return true;
}

cudaError_t vet_pointer_side(const Memcpy3DRequest& r, bool source, uint64_t element,
                             uint64_t row_bytes) {
  const void* ptr = source ? r.src_ptr : r.dst_ptr;
  if (ptr == nullptr) return cudaSuccess;  // the runtime judges null
  uint64_t first = 0, span = 0;
  if (!reach(r, source, element, row_bytes, first, span)) return cudaErrorInvalidValue;
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  if (first > UINTPTR_MAX - address) return cudaErrorInvalidValue;
  return vet_device_pointer(reinterpret_cast<const void*>(address + first), span);
}

// Whether the runtime takes a pointer side of a copy of `kind` as device memory (with
// cudaMemcpyDefault it infers it: vetted as device memory, so the backend's own is refused).
bool taken_as_device(cudaMemcpyKind kind, bool source) {
  switch (kind) {
    case cudaMemcpyDeviceToDevice:
    case cudaMemcpyDefault:
      return true;
    case cudaMemcpyHostToDevice:
      return !source;
    case cudaMemcpyDeviceToHost:
      return source;
    default:
      return false;
  }
}

cudaError_t run_on_runtime(const Memcpy3DRequest& r, void* src_host, void* dst_host, bool peer,
                           bool with_stream, cudaStream_t stream) {
  const cudaPitchedPtr src{src_host != nullptr ? src_host : r.src_ptr, r.src_pitch, r.src_xsize,
                           r.src_ysize};
  const cudaPitchedPtr dst{dst_host != nullptr ? dst_host : r.dst_ptr, r.dst_pitch, r.dst_xsize,
                           r.dst_ysize};
  const cudaPos src_pos{r.src_x, r.src_y, r.src_z}, dst_pos{r.dst_x, r.dst_y, r.dst_z};
  const cudaExtent extent{r.width, r.height, r.depth};
  if (peer) {
    cudaMemcpy3DPeerParms p{};
    p.srcArray = r.src_array;
    p.srcPos = src_pos;
    p.srcPtr = src;
    p.srcDevice = r.src_device;
    p.dstArray = r.dst_array;
    p.dstPos = dst_pos;
    p.dstPtr = dst;
    p.dstDevice = r.dst_device;
    p.extent = extent;
    return with_stream ? ::cudaMemcpy3DPeerAsync(&p, stream) : ::cudaMemcpy3DPeer(&p);
  }
  cudaMemcpy3DParms p{};
  p.srcArray = r.src_array;
  p.srcPos = src_pos;
  p.srcPtr = src;
  p.dstArray = r.dst_array;
  p.dstPos = dst_pos;
  p.dstPtr = dst;
  p.extent = extent;
  p.kind = r.kind;
  return with_stream ? ::cudaMemcpy3DAsync(&p, stream) : ::cudaMemcpy3D(&p);
}

cudaError_t copy_3d(WireReader& in, WireWriter& out, size_t at, bool peer, bool with_stream) {
  const auto r = get_record<Memcpy3DRequest>(in);
  const char* call = peer ? "cudaMemcpy3DPeer" : "cudaMemcpy3D";
  const cudaStream_t stream = request_stream(r.stream, with_stream, call);
  const bool host_source = r.host_row_bytes != 0 && r.kind == cudaMemcpyHostToDevice;
  const bool host_destination = r.host_row_bytes != 0 && r.kind == cudaMemcpyDeviceToHost;
  auto malformed = [&](const std::string& what) {
    raise(ErrorKind::kInvalidInput, std::string(call) + ": " + what);
  };
  if (peer && (r.kind != cudaMemcpyDeviceToDevice || r.host_row_bytes != 0)) {
    malformed("a peer copy with a host side");
  }
  if (r.host_row_bytes != 0 && !host_source && !host_destination) malformed("a stray host side");
  if ((host_source && (r.src_ptr != nullptr || r.src_array != nullptr)) ||
      (host_destination && (r.dst_ptr != nullptr || r.dst_array != nullptr))) {
    malformed("a host side naming an address");  // host memory travels as bytes, never by name
  }
  const unsigned __int128 host_bytes =
      static_cast<unsigned __int128>(r.host_row_bytes) * r.height * r.depth;
  if (host_bytes > kMemcpyChunkBytes) malformed("a chunk over the limit");
  const uint64_t bytes = static_cast<uint64_t>(host_bytes);
  std::span<const std::byte> data;
  if (host_source) data = in.get_raw(bytes);
  in.expect_end();

  cudaError_t vetted =
      first_failure(vet_copy_stream(stream, with_stream, host_source || host_destination),
                    vet(r.src_array), vet(r.dst_array));
  // The rows' length in bytes (the element asked of the runtime only for the session's arrays).
  const uint64_t element = vetted == cudaSuccess ? copy_element_bytes(r.src_array, r.dst_array) : 1;
  const unsigned __int128 row = static_cast<unsigned __int128>(element) * r.width;
  const uint64_t row_bytes = row > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(row);
  if (vetted == cudaSuccess && r.host_row_bytes != 0 && r.host_row_bytes != row_bytes) {
    vetted = cudaErrorInvalidValue;  // the client counted other rows than the runtime will
  }
  const bool copies = r.height != 0 && r.depth != 0 && r.width != 0;
  for (const bool source : {true, false}) {
    const bool named = source ? !host_source && r.src_array == nullptr && r.src_ptr != nullptr
                              : !host_destination && r.dst_array == nullptr && r.dst_ptr != nullptr;
    if (vetted != cudaSuccess || !named) continue;
    if (!taken_as_device(r.kind, source)) {
      // The runtime would take this address as host memory: the backend's own. Never.
      vetted = static_cast<cudaError_t>(services::refuse(
          cudaErrorInvalidValue, "cudart", "host address", source ? r.src_ptr : r.dst_ptr,
          "host memory travels as bytes, never by address"));
    } else if (copies) {
      vetted = vet_pointer_side(r, source, element, row_bytes);
    }
  }
  void* dst_host = nullptr;
  if (host_destination) {
    out.put<uint64_t>(bytes);
    dst_host = out.put_space(bytes);  // the reply is the staging buffer
  }
  void* src_host = host_source ? const_cast<std::byte*>(data.data()) : nullptr;
  const cudaError_t result = vetted != cudaSuccess
                                 ? vetted
                                 : run_on_runtime(r, src_host, dst_host, peer, with_stream, stream);
  out.store_at<int32_t>(at, result);
  // A failed copy returns no data, so the caller's buffer stays untouched, as natively.
  if (result != cudaSuccess) out.truncate(at + sizeof(int32_t));
  return result;
}

}  // namespace

uint64_t copy_element_bytes(cudaArray_t src, cudaArray_t dst) {
  if (src == nullptr && dst == nullptr) return 1;
  const uint64_t element = element_bytes(src != nullptr ? src : dst);
  return element == kUnknown || element == 0 ? 1 : element;
}

bool run_memcpy_3d(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  if (fn != Fn::cudaMemcpy3D && fn != Fn::cudaMemcpy3DAsync && fn != Fn::cudaMemcpy3DPeer &&
      fn != Fn::cudaMemcpy3DPeerAsync) {
    return false;
  }
  const size_t at = out.size();
  out.put<int32_t>(cudaSuccess);  // the result, stored once the call has run
  const bool peer = fn == Fn::cudaMemcpy3DPeer || fn == Fn::cudaMemcpy3DPeerAsync;
  const bool with_stream = fn == Fn::cudaMemcpy3DAsync || fn == Fn::cudaMemcpy3DPeerAsync;
  result = copy_3d(in, out, at, peer, with_stream);
  return true;
}

}  // namespace gvirtus::cudart

// Copies with a CUDA array on either side (wire: common/driver_wire.h's ArrayBoxRequest), run as
// the driver's cuMemcpy3D(Async). Hostile until checked: each side's kind must be one of three,
// at least one side an array and at most one the client's memory (packed, its corner 0 and its
// pitch and height the box's, at most a chunk); an array must be the session's (its bounds are
// the driver's to check, an array being its own object), and the device memory a side spans
// (from its corner, pitch x slice height x (depth - 1) + pitch x (height - 1) + width bytes)
// must lie in the session's allocations. A host side is memory of ours: the request's bytes, or
// the reply's landing space; an asynchronous copy with one is waited for before the reply.
#include "plugins/cuda/backend/array_boxes.h"

#include <string>

#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/landing_reply.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;
using Wide = unsigned __int128;

struct Side {
  BoxSide kind;
  CUdeviceptr device;
  CUarray array;
  uint64_t x, y, z, pitch, height;
};

Side source(const ArrayBoxRequest& r) {
  return {static_cast<BoxSide>(r.src_side),
          r.src_device,
          r.src_array,
          r.src_x,
          r.src_y,
          r.src_z,
          r.src_pitch,
          r.src_height};
}

Side destination(const ArrayBoxRequest& r) {
  return {static_cast<BoxSide>(r.dst_side),
          r.dst_device,
          r.dst_array,
          r.dst_x,
          r.dst_y,
          r.dst_z,
          r.dst_pitch,
          r.dst_height};
}

void check_shape(const Side& s, const ArrayBoxRequest& r, const char* which) {
  if (s.kind != BoxSide::kHost && s.kind != BoxSide::kDevice && s.kind != BoxSide::kArray) {
    raise(ErrorKind::kInvalidInput, std::string("a box copy's ") + which + " side of kind " +
                                        std::to_string(static_cast<uint32_t>(s.kind)));
  }
  if (s.kind == BoxSide::kHost && (s.x != 0 || s.y != 0 || s.z != 0 || s.pitch != r.width ||
                                   s.height != r.height || s.device != 0 || s.array != nullptr)) {
    raise(ErrorKind::kInvalidInput, std::string("a box copy's packed ") + which + " side");
  }
}

// The session's device memory a device side spans (named by a unified address or not), or the
// session's array.
CUresult vet_side(const Side& s, const ArrayBoxRequest& r) {
  if (s.kind == BoxSide::kArray) return vet(s.array);
  if (s.kind != BoxSide::kDevice && s.kind != BoxSide::kUnified) return CUDA_SUCCESS;
  if ((r.height > 1 || r.depth > 1) && s.pitch < r.width) return CUDA_ERROR_INVALID_VALUE;
  if (r.depth > 1 && s.height < r.height) return CUDA_ERROR_INVALID_VALUE;
  const Wide start = Wide{s.device} + (Wide{s.z} * s.height + s.y) * s.pitch + s.x;
  const Wide span = Wide{r.depth - 1} * s.height * s.pitch + Wide{r.height - 1} * s.pitch + r.width;
  if (start + span > UINT64_MAX) return CUDA_ERROR_INVALID_VALUE;
  return vet_device_pointer(static_cast<CUdeviceptr>(start), static_cast<uint64_t>(span));
}

// One side of a CUDA_MEMCPY3D, given its fields (the source's or the destination's).
template <typename Host>
void set_side(const Side& s, Host host, size_t& x, size_t& y, size_t& z, size_t& pitch,
              size_t& height, CUmemorytype& type, Host& host_field, CUdeviceptr& device,
              CUarray& array) {
  x = s.x, y = s.y, z = s.z, pitch = s.pitch, height = s.height;
  switch (s.kind) {
    case BoxSide::kHost:
      type = CU_MEMORYTYPE_HOST, host_field = host;
      break;
    case BoxSide::kDevice:
      type = CU_MEMORYTYPE_DEVICE, device = s.device;
      break;
    case BoxSide::kUnified:
      type = CU_MEMORYTYPE_UNIFIED, device = s.device;
      break;
    case BoxSide::kArray:
      type = CU_MEMORYTYPE_ARRAY, array = s.array;
      break;
  }
}

void set_source(CUDA_MEMCPY3D& c, const Side& s, const void* host) {
  set_side(s, host, c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch, c.srcHeight, c.srcMemoryType,
           c.srcHost, c.srcDevice, c.srcArray);
}

void set_destination(CUDA_MEMCPY3D& c, const Side& s, void* host) {
  set_side(s, host, c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch, c.dstHeight, c.dstMemoryType,
           c.dstHost, c.dstDevice, c.dstArray);
}

CUresult run(const CUDA_MEMCPY3D& copy, CUstream stream, bool with_stream, bool wait) {
  if (!with_stream) {
    return real().cuMemcpy3D_v2 != nullptr ? real().cuMemcpy3D_v2(&copy) : CUDA_ERROR_NOT_SUPPORTED;
  }
  if (real().cuMemcpy3DAsync_v2 == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  const CUresult r = real().cuMemcpy3DAsync_v2(&copy, stream);
  return r == CUDA_SUCCESS && wait ? real().cuStreamSynchronize(stream) : r;
}

}  // namespace

CUresult node_box(const ArrayBoxRequest& request, CUDA_MEMCPY3D& copy) {
  const Side src = source(request), dst = destination(request);
  for (const Side* side : {&src, &dst}) {
    if (side->kind != BoxSide::kDevice && side->kind != BoxSide::kUnified &&
        side->kind != BoxSide::kArray) {
      raise(ErrorKind::kInvalidInput,
            "a copy node's side of kind " + std::to_string(static_cast<uint32_t>(side->kind)));
    }
  }
  if (request.stream != nullptr) raise(ErrorKind::kInvalidInput, "a stream on a copy node");
  if (request.width == 0 || request.height == 0 || request.depth == 0) {
    return CUDA_ERROR_INVALID_VALUE;  // the driver's answer for an empty copy node
  }
  const CUresult result =
      first_failure(CUDA_SUCCESS, vet_side(src, request), vet_side(dst, request));
  copy = CUDA_MEMCPY3D{};
  copy.WidthInBytes = request.width, copy.Height = request.height, copy.Depth = request.depth;
  set_source(copy, src, nullptr);
  set_destination(copy, dst, nullptr);
  return result;
}

bool run_array_box(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  if (fn != Fn::cuMemcpy3D_v2 && fn != Fn::cuMemcpy3DAsync_v2) return false;
  const bool with_stream = fn == Fn::cuMemcpy3DAsync_v2;
  const auto request = get_record<ArrayBoxRequest>(in);
  if (!with_stream && request.stream != nullptr) {
    raise(ErrorKind::kInvalidInput, "a stream on a synchronous box copy");
  }
  const Side src = source(request), dst = destination(request);
  check_shape(src, request, "source");
  check_shape(dst, request, "destination");
  if (src.kind != BoxSide::kArray && dst.kind != BoxSide::kArray) {
    raise(ErrorKind::kInvalidInput, "a box copy without an array");
  }
  if (src.kind == BoxSide::kHost && dst.kind == BoxSide::kHost) {
    raise(ErrorKind::kInvalidInput, "a box copy from host to host");
  }
  if (request.width == 0 || request.height == 0 || request.depth == 0) {
    raise(ErrorKind::kInvalidInput, "an empty box copy");
  }
  const bool host_side = src.kind == BoxSide::kHost || dst.kind == BoxSide::kHost;
  const Wide packed = Wide{request.width} * request.height * request.depth;
  if (host_side && packed > kCopyChunkBytes) {
    raise(ErrorKind::kInvalidInput, "a box copy's host bytes over a chunk");
  }
  const uint64_t bytes = host_side ? static_cast<uint64_t>(packed) : 0;
  std::span<const std::byte> data;
  if (src.kind == BoxSide::kHost) data = in.get_raw(bytes);
  in.expect_end();

  result = first_failure(CUDA_SUCCESS, with_stream ? vet(request.stream) : CUDA_SUCCESS,
                         vet_side(src, request), vet_side(dst, request));
  if (result == CUDA_SUCCESS && with_stream && host_side) result = not_capturing(request.stream);
  CUDA_MEMCPY3D copy{};
  copy.WidthInBytes = request.width, copy.Height = request.height, copy.Depth = request.depth;
  if (dst.kind != BoxSide::kHost) {
    set_source(copy, src, data.data());
    set_destination(copy, dst, nullptr);
    // Bytes of the request are gone when the call returns: an asynchronous copy of them waits.
    if (result == CUDA_SUCCESS) result = run(copy, request.stream, with_stream, host_side);
    out.put<int32_t>(result);
    return true;
  }
  landing_reply(out, result, bytes, [&](std::byte* landing) {
    set_source(copy, src, nullptr);
    set_destination(copy, dst, landing);
    return run(copy, request.stream, with_stream, true);
  });
  return true;
}

}  // namespace gvirtus::cuda

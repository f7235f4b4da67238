// Copies with a CUDA array on either side (array_boxes.h). Host memory is the caller's: its rows
// are packed into the request (or unpacked from the reply) by the caller's pitch and slice
// height, a piece of the box at a time, each at most a chunk: whole slices when they fit, else
// rows of one slice.
#include "plugins/cuda/frontend/array_boxes.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/host_staging.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/stream_capture.h"

namespace gvirtus::cuda {
namespace {

struct Side {
  BoxSide kind;
  CUdeviceptr device;
  CUarray array;
  std::byte* host;  // const for a source
  uint64_t x, y, z, pitch, height;
};

CUresult side_of(CUmemorytype type, const void* host, CUdeviceptr device, CUarray array, size_t x,
                 size_t y, size_t z, size_t pitch, size_t height, Side& side) {
  side = {BoxSide::kHost, 0, nullptr, nullptr, x, y, z, pitch, height};
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      side.host = static_cast<std::byte*>(const_cast<void*>(host));
      return host != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_MEMORYTYPE_DEVICE:
      side.kind = BoxSide::kDevice;
      side.device = device;
      return device != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_MEMORYTYPE_UNIFIED:
      if (device == 0) return CUDA_ERROR_INVALID_VALUE;
      if (device_ranges().find(as_pointer(device)).has_value()) {
        side.kind = BoxSide::kDevice;
        side.device = device;
      } else {
        side.host = reinterpret_cast<std::byte*>(static_cast<uintptr_t>(device));
      }
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_ARRAY:
      side.kind = BoxSide::kArray;
      side.array = array;
      return array != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// A piece of the box: its corner relative to the box's, and its extent.
struct Piece {
  uint64_t x, y, z, width, height, depth;
};

// The pieces of a box whose host side travels as bytes, in order, each at most a chunk (a row
// is: no array is wider than 2 MiB, and copy_array_box refuses a wider box).
std::vector<Piece> pieces_of(uint64_t width, uint64_t height, uint64_t depth) {
  std::vector<Piece> pieces;
  if (width * height > kCopyChunkBytes) {  // rows of a slice
    const uint64_t rows = kCopyChunkBytes / width;
    for (uint64_t z = 0; z < depth; ++z) {
      for (uint64_t y = 0; y < height; y += rows) {
        pieces.push_back({0, y, z, width, std::min(rows, height - y), 1});
      }
    }
  } else {  // whole slices
    const uint64_t slices = kCopyChunkBytes / (width * height);
    for (uint64_t z = 0; z < depth; z += slices) {
      pieces.push_back({0, 0, z, width, height, std::min(slices, depth - z)});
    }
  }
  return pieces;
}

void put_side(ArrayBoxRequest& r, bool source, const Side& s, const Piece& at) {
  const bool packed = s.kind == BoxSide::kHost;
  const uint32_t kind = static_cast<uint32_t>(s.kind);
  const uint64_t x = packed ? 0 : s.x + at.x, y = packed ? 0 : s.y + at.y,
                 z = packed ? 0 : s.z + at.z;
  const uint64_t pitch = packed ? at.width : s.pitch, height = packed ? at.height : s.height;
  if (source) {
    r.src_side = kind, r.src_device = s.device, r.src_array = s.array;
    r.src_x = x, r.src_y = y, r.src_z = z, r.src_pitch = pitch, r.src_height = height;
  } else {
    r.dst_side = kind, r.dst_device = s.device, r.dst_array = s.array;
    r.dst_x = x, r.dst_y = y, r.dst_z = z, r.dst_pitch = pitch, r.dst_height = height;
  }
}

// Where row (y, z) of a piece starts in the caller's memory.
std::byte* host_row(const Side& s, const Piece& at, uint64_t y, uint64_t z) {
  return s.host + ((s.z + at.z + z) * s.height + s.y + at.y + y) * s.pitch + s.x + at.x;
}

}  // namespace

bool has_array_side(const CUDA_MEMCPY3D& copy) {
  return copy.srcMemoryType == CU_MEMORYTYPE_ARRAY || copy.dstMemoryType == CU_MEMORYTYPE_ARRAY;
}

CUresult copy_array_box(const CUDA_MEMCPY3D& copy, CUstream stream, bool asynchronous) {
  Side src{}, dst{};
  if (const CUresult r =
          side_of(copy.srcMemoryType, copy.srcHost, copy.srcDevice, copy.srcArray, copy.srcXInBytes,
                  copy.srcY, copy.srcZ, copy.srcPitch, copy.srcHeight, src);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (const CUresult r =
          side_of(copy.dstMemoryType, copy.dstHost, copy.dstDevice, copy.dstArray, copy.dstXInBytes,
                  copy.dstY, copy.dstZ, copy.dstPitch, copy.dstHeight, dst);
      r != CUDA_SUCCESS) {
    return r;
  }
  const uint64_t width = copy.WidthInBytes, height = copy.Height, depth = copy.Depth;
  if (width == 0 || height == 0 || depth == 0) return CUDA_SUCCESS;
  const Fn fn = asynchronous ? Fn::cuMemcpy3DAsync_v2 : Fn::cuMemcpy3D_v2;
  const CUstream sent_stream = asynchronous ? stream : nullptr;
  if (src.kind != BoxSide::kHost && dst.kind != BoxSide::kHost) {  // all on the backend's GPU
    ArrayBoxRequest request{};
    const Piece whole{0, 0, 0, width, height, depth};
    put_side(request, true, src, whole);
    put_side(request, false, dst, whole);
    request.width = width, request.height = height, request.depth = depth;
    request.stream = sent_stream;
    auto encode = [&](WireWriter& w) { put_record(w, request); };
    return asynchronous ? remote_async(fn, encode) : remote_sync(fn, encode, [](WireReader&) {});
  }
  if (src.kind == BoxSide::kHost && dst.kind == BoxSide::kHost) return CUDA_ERROR_INVALID_VALUE;
  const Side& host = src.kind == BoxSide::kHost ? src : dst;
  if (width > kCopyChunkBytes) return CUDA_ERROR_INVALID_VALUE;  // wider than any array
  if ((height > 1 || depth > 1) && host.pitch < width) return CUDA_ERROR_INVALID_VALUE;
  if (depth > 1 && host.height < height) return CUDA_ERROR_INVALID_VALUE;
  // A capturing stream takes the copy as one copy node, its host side staged through a block on
  // the backend (host_staging.h), so each launch reads or writes the program's memory as it is
  // then; never a copy of the bytes sent now.
  if (asynchronous && capturing(stream)) return capture_copy_node(stream, copy);
  std::vector<std::byte> packed;
  for (const Piece& at : pieces_of(width, height, depth)) {
    ArrayBoxRequest request{};
    put_side(request, true, src, at);
    put_side(request, false, dst, at);
    request.width = at.width, request.height = at.height, request.depth = at.depth;
    request.stream = sent_stream;
    const uint64_t bytes = at.width * at.height * at.depth;
    CUresult r = CUDA_SUCCESS;
    if (src.kind == BoxSide::kHost) {
      packed.resize(bytes);
      for (uint64_t z = 0; z < at.depth; ++z) {
        for (uint64_t y = 0; y < at.height; ++y) {
          std::memcpy(packed.data() + (z * at.height + y) * at.width, host_row(src, at, y, z),
                      at.width);
        }
      }
      auto encode = [&](WireWriter& w) {
        put_record(w, request);
        w.put_raw(packed.data(), packed.size());
      };
      r = asynchronous ? remote_async(fn, encode) : remote_sync(fn, encode, [](WireReader&) {});
    } else {
      r = remote_sync(
          fn, [&](WireWriter& w) { put_record(w, request); },
          [&](WireReader& in) {
            if (in.remaining() == 0) return;  // a failure brings no bytes
            const auto data = in.get_blob(bytes);
            if (data.size() != bytes) return;
            for (uint64_t z = 0; z < at.depth; ++z) {
              for (uint64_t y = 0; y < at.height; ++y) {
                std::memcpy(host_row(dst, at, y, z), data.data() + (z * at.height + y) * at.width,
                            at.width);
              }
            }
          });
    }
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

}  // namespace gvirtus::cuda

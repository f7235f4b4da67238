// The 2D copies of the client libcuda.so.1 (cuMemcpy2D, cuMemcpy2DUnaligned, cuMemcpy2DAsync, and
// cuMemcpy3D(Async) as the 2D copies of their slices):
// the host side is the application's memory, so its rows travel, packed, and its pitch never
// leaves the stub (common/driver_wire.h). Each side's memory type is the caller's, or, for
// CU_MEMORYTYPE_UNIFIED, what the stub knows of the address; a copy with an array on either side
// goes as a box (array_boxes.h). Host to device is sent ahead when asynchronous, as the 1D copy is;
// device to host waits for its rows; host to host is the caller's own memcpy, in stream order. On a
// capturing stream each is one copy node of the capture's graph (host_staging.h).
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/log.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/copy_boxes.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/array_boxes.h"
#include "plugins/cuda/frontend/copies_3d.h"
#include "plugins/cuda/frontend/host_staging.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/pool_routes.h"
#include "plugins/cuda/frontend/stream_capture.h"

namespace gvirtus::cuda {
namespace {

struct Side {
  bool device;
  CUdeviceptr device_address;
  std::byte* host;  // const for a source
  size_t pitch;
};

// One side of the copy (not an array), or an error for what the stub cannot copy.
CUresult side_of(CUmemorytype type, const void* host, CUdeviceptr device, size_t pitch,
                 Side& side) {
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      side = {false, 0, static_cast<std::byte*>(const_cast<void*>(host)), pitch};
      return host != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_MEMORYTYPE_DEVICE:
      side = {true, device, nullptr, pitch};
      return device != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_MEMORYTYPE_UNIFIED: {
      const bool on_device = device_ranges().find(as_pointer(device)).has_value();
      side = {on_device, device,
              on_device ? nullptr : reinterpret_cast<std::byte*>(static_cast<uintptr_t>(device)),
              pitch};
      return device != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    case CU_MEMORYTYPE_ARRAY:
      break;  // copy_2d sends those as boxes
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// The copy as a one-slice box (a captured copy becomes a copy node: host_staging.h).
CUDA_MEMCPY3D box(const Side& dst, const Side& src, size_t width, size_t height) {
  CUDA_MEMCPY3D c{};
  auto side = [](const Side& s, CUmemorytype& type, const void*& host, CUdeviceptr& device,
                 size_t& pitch) {
    type = s.device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    if (s.device)
      device = s.device_address;
    else
      host = s.host;
    pitch = s.pitch;
  };
  const void* src_host = nullptr;
  const void* dst_host = nullptr;
  side(src, c.srcMemoryType, src_host, c.srcDevice, c.srcPitch);
  side(dst, c.dstMemoryType, dst_host, c.dstDevice, c.dstPitch);
  c.srcHost = src_host;
  c.dstHost = const_cast<void*>(dst_host);
  c.WidthInBytes = width, c.Height = height, c.Depth = 1;
  return c;
}

// Rows per request when a host side is involved: as many as fit in a chunk (at least one; a row
// wider than a chunk is sent as 1D copies, row by row).
size_t rows_per_request(size_t width) {
  return std::max<size_t>(1, kCopyChunkBytes / std::max<size_t>(width, 1));
}

CUresult host_to_device(Fn fn, const Side& dst, const Side& src, size_t width, size_t height,
                        CUstream stream, bool ahead) {
  if (ahead && capturing(stream)) return capture_copy_node(stream, box(dst, src, width, height));
  if (width > kCopyChunkBytes) {  // rows wider than a chunk: each as a 1D copy
    for (size_t row = 0; row < height; ++row) {
      const CUresult r = ahead ? cuMemcpyHtoDAsync_v2(dst.device_address + row * dst.pitch,
                                                      src.host + row * src.pitch, width, stream)
                               : cuMemcpyHtoD_v2(dst.device_address + row * dst.pitch,
                                                 src.host + row * src.pitch, width);
      if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
  }
  const size_t step = rows_per_request(width);
  std::vector<std::byte> packed;
  for (size_t first = 0; first < height; first += step) {
    const size_t rows = std::min(step, height - first);
    packed.resize(rows * width);
    for (size_t row = 0; row < rows; ++row) {
      std::memcpy(packed.data() + row * width, src.host + (first + row) * src.pitch, width);
    }
    const Copy2DRequest request{static_cast<uint32_t>(Copy2DDirection::kHostToDevice),
                                dst.device_address + first * dst.pitch,
                                dst.pitch,
                                0,
                                0,
                                width,
                                rows,
                                stream};
    auto encode = [&](WireWriter& w) {
      put_record(w, request);
      w.put_raw(packed.data(), packed.size());
    };
    const CUresult r =
        ahead ? remote_async(fn, encode) : remote_sync(fn, encode, [](WireReader&) {});
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult device_to_host(Fn fn, const Side& dst, const Side& src, size_t width, size_t height,
                        CUstream stream) {
  if (fn == Fn::cuMemcpy2DAsync_v2 && capturing(stream)) {
    return capture_copy_node(stream, box(dst, src, width, height));
  }
  if (width > kCopyChunkBytes) {
    for (size_t row = 0; row < height; ++row) {
      const CUresult r =
          fn == Fn::cuMemcpy2DAsync_v2
              ? cuMemcpyDtoHAsync_v2(dst.host + row * dst.pitch,
                                     src.device_address + row * src.pitch, width, stream)
              : cuMemcpyDtoH_v2(dst.host + row * dst.pitch, src.device_address + row * src.pitch,
                                width);
      if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
  }
  const size_t step = rows_per_request(width);
  for (size_t first = 0; first < height; first += step) {
    const size_t rows = std::min(step, height - first);
    const Copy2DRequest request{static_cast<uint32_t>(Copy2DDirection::kDeviceToHost),
                                0,
                                0,
                                src.device_address + first * src.pitch,
                                src.pitch,
                                width,
                                rows,
                                stream};
    const CUresult r = remote_sync(
        fn, [&](WireWriter& w) { put_record(w, request); },
        [&](WireReader& in) {
          if (in.remaining() == 0) return;  // a failure brings no rows
          const auto data = in.get_blob(rows * width);
          if (data.size() != rows * width) return;
          for (size_t row = 0; row < rows; ++row) {
            std::memcpy(dst.host + (first + row) * dst.pitch, data.data() + row * width, width);
          }
        });
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult copy_2d(Fn fn, const CUDA_MEMCPY2D* copy, CUstream stream) {
  if (copy == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const size_t width = copy->WidthInBytes;
  const size_t height = copy->Height;
  if (copy->srcMemoryType == CU_MEMORYTYPE_ARRAY || copy->dstMemoryType == CU_MEMORYTYPE_ARRAY) {
    return copy_array_box(as_box(*copy), stream, fn == Fn::cuMemcpy2DAsync_v2);
  }
  Side src{}, dst{};
  if (const CUresult r =
          side_of(copy->srcMemoryType, copy->srcHost, copy->srcDevice, copy->srcPitch, src);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (const CUresult r =
          side_of(copy->dstMemoryType, copy->dstHost, copy->dstDevice, copy->dstPitch, dst);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (copy->srcXInBytes != 0 || copy->srcY != 0 || copy->dstXInBytes != 0 || copy->dstY != 0) {
    // Offsets: fold them into the addresses, as the driver applies them.
    if (src.device)
      src.device_address += copy->srcY * src.pitch + copy->srcXInBytes;
    else
      src.host += copy->srcY * src.pitch + copy->srcXInBytes;
    if (dst.device)
      dst.device_address += copy->dstY * dst.pitch + copy->dstXInBytes;
    else
      dst.host += copy->dstY * dst.pitch + copy->dstXInBytes;
  }
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  if ((height > 1 && (src.pitch < width || dst.pitch < width))) return CUDA_ERROR_INVALID_VALUE;
  const bool ahead = fn == Fn::cuMemcpy2DAsync_v2;
  if (src.device && dst.device) {
    const Copy2DRequest request{static_cast<uint32_t>(Copy2DDirection::kDeviceToDevice),
                                dst.device_address,
                                dst.pitch,
                                src.device_address,
                                src.pitch,
                                width,
                                height,
                                stream};
    auto encode = [&](WireWriter& w) { put_record(w, request); };
    return ahead ? remote_async(fn, encode) : remote_sync(fn, encode, [](WireReader&) {});
  }
  if (dst.device) return host_to_device(fn, dst, src, width, height, stream, ahead);
  if (src.device) return device_to_host(fn, dst, src, width, height, stream);
  // Host to host: in the caller, after the stream's earlier work (a capture takes it as a copy
  // node, which copies here each time the graph runs: host_staging.h).
  if (ahead) {
    if (capturing(stream)) return capture_copy_node(stream, box(dst, src, width, height));
    if (const CUresult r = cuStreamSynchronize(stream); r != CUDA_SUCCESS) return r;
  }
  for (size_t row = 0; row < height; ++row) {
    std::memmove(dst.host + row * dst.pitch, src.host + row * src.pitch, width);
  }
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy2D_v2(
    const CUDA_MEMCPY2D* pCopy) {
  return cr::copy_2d(cr::Fn::cuMemcpy2D_v2, pCopy, nullptr);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy2DUnaligned_v2(
    const CUDA_MEMCPY2D* pCopy) {
  return cr::copy_2d(cr::Fn::cuMemcpy2DUnaligned_v2, pCopy, nullptr);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy2DAsync_v2(
    const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return cr::copy_2d(cr::Fn::cuMemcpy2DAsync_v2, pCopy, hStream);
}

namespace gvirtus::cuda {

// A 3D copy as the 2D copies of its slices (on a capturing stream, one copy node), or, with an
// array on either side (whose slices have no pitch to name), as a box (array_boxes.h). Slice z of a
// side starts (offset z + z) x pitch x height bytes in.
CUresult copy_3d(const CUDA_MEMCPY3D* copy, CUstream stream, bool with_stream) {
  if (copy == nullptr || copy->reserved0 != nullptr || copy->reserved1 != nullptr ||
      copy->srcLOD != 0 || copy->dstLOD != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (has_array_side(*copy)) return copy_array_box(*copy, stream, with_stream);
  if (copy->Depth > 1 && (copy->srcHeight < copy->Height || copy->dstHeight < copy->Height)) {
    return CUDA_ERROR_INVALID_VALUE;  // a slice would overlap the next
  }
  // A capture takes the copy as one copy node, as natively, not as the nodes of its slices;
  // staged where a side is the program's memory (host_staging.h).
  if (with_stream && capturing(stream)) {
    if (copy->WidthInBytes == 0 || copy->Height == 0 || copy->Depth == 0) return CUDA_SUCCESS;
    return capture_copy_node(stream, *copy);
  }
  for (size_t z = 0; z < copy->Depth; ++z) {
    CUDA_MEMCPY2D slice{};
    slice.srcXInBytes = copy->srcXInBytes;
    slice.srcY = (copy->srcZ + z) * copy->srcHeight + copy->srcY;
    slice.srcMemoryType = copy->srcMemoryType;
    slice.srcHost = copy->srcHost;
    slice.srcDevice = copy->srcDevice;
    slice.srcPitch = copy->srcPitch;
    slice.dstXInBytes = copy->dstXInBytes;
    slice.dstY = (copy->dstZ + z) * copy->dstHeight + copy->dstY;
    slice.dstMemoryType = copy->dstMemoryType;
    slice.dstHost = copy->dstHost;
    slice.dstDevice = copy->dstDevice;
    slice.dstPitch = copy->dstPitch;
    slice.WidthInBytes = copy->WidthInBytes;
    slice.Height = copy->Height;
    const CUresult r = with_stream ? copy_2d(Fn::cuMemcpy2DAsync_v2, &slice, stream)
                                   : copy_2d(Fn::cuMemcpy2D_v2, &slice, nullptr);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

namespace {

// cuMemcpy3DPeer(Async): cuMemcpy3D(Async) with each side's context named. The backend's driver
// tells each side's device by its unified address, so the copy goes as cuMemcpy3D once the
// contexts are taken off. In a pool, sides whose contexts are two backends' are not copied: a 3D
// copy between backends is not done (CUDA_ERROR_NOT_SUPPORTED, said in the log).
CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER* peer, CUstream stream, bool with_stream) {
  if (peer == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto src_backend = pool_backend_of_handle("context", peer->srcContext);
  const auto dst_backend = pool_backend_of_handle("context", peer->dstContext);
  if (src_backend && dst_backend && *src_backend != *dst_backend) {
    GVIRTUS_LOG(kWarning) << "cuMemcpy3DPeer between pool backends " << *src_backend << " and "
                          << *dst_backend << " is not supported";
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  CUDA_MEMCPY3D copy{};
  copy.srcXInBytes = peer->srcXInBytes;
  copy.srcY = peer->srcY;
  copy.srcZ = peer->srcZ;
  copy.srcLOD = peer->srcLOD;
  copy.srcMemoryType = peer->srcMemoryType;
  copy.srcHost = peer->srcHost;
  copy.srcDevice = peer->srcDevice;
  copy.srcArray = peer->srcArray;
  copy.srcPitch = peer->srcPitch;
  copy.srcHeight = peer->srcHeight;
  copy.dstXInBytes = peer->dstXInBytes;
  copy.dstY = peer->dstY;
  copy.dstZ = peer->dstZ;
  copy.dstLOD = peer->dstLOD;
  copy.dstMemoryType = peer->dstMemoryType;
  copy.dstHost = peer->dstHost;
  copy.dstDevice = peer->dstDevice;
  copy.dstArray = peer->dstArray;
  copy.dstPitch = peer->dstPitch;
  copy.dstHeight = peer->dstHeight;
  copy.WidthInBytes = peer->WidthInBytes;
  copy.Height = peer->Height;
  copy.Depth = peer->Depth;
  const stub::RouteScope route(dst_backend ? dst_backend : src_backend);
  return copy_3d(&copy, stream, with_stream);
}

}  // namespace
}  // namespace gvirtus::cuda

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy3DPeer(
    const CUDA_MEMCPY3D_PEER* pCopy) {
  return cr::copy_3d_peer(pCopy, nullptr, false);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy3DPeerAsync(
    const CUDA_MEMCPY3D_PEER* pCopy, CUstream hStream) {
  return cr::copy_3d_peer(pCopy, hStream, true);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy3D_v2(
    const CUDA_MEMCPY3D* pCopy) {
  return cr::copy_3d(pCopy, nullptr, false);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy3DAsync_v2(
    const CUDA_MEMCPY3D* pCopy, CUstream hStream) {
  return cr::copy_3d(pCopy, hStream, true);
}

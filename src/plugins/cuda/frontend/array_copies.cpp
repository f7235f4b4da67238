// Copies between the client's memory and CUDA arrays in the client libcuda.so.1 (wire:
// common/driver_wire.h's ArrayCopyRequest): the host side's bytes travel in chunks of at most
// kCopyChunkBytes, each at its offset in the array, as the linear copies' do. Every chunk is
// waited for (the asynchronous forms too: their bytes are in the request, and the other way the
// reply is their landing place). A capturing stream takes either as one copy node of a 1D box at
// the offset, its host side staged through a block on the backend (host_staging.h).
#include <cuda.h>

#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/chunks.h"
#include "plugins/cuda/frontend/host_staging.h"
#include "plugins/cuda/frontend/stream_capture.h"

namespace cr = gvirtus::cuda;

namespace {

// The linear copy of `bytes` between the program's memory and an array at `offset`, as a box.
CUDA_MEMCPY3D array_box(CUarray array, size_t offset, const void* host, size_t bytes,
                        bool to_array) {
  CUDA_MEMCPY3D c{};
  c.WidthInBytes = bytes, c.Height = 1, c.Depth = 1;
  if (to_array) {
    c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = host;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = array, c.dstXInBytes = offset;
  } else {
    c.srcMemoryType = CU_MEMORYTYPE_ARRAY, c.srcArray = array, c.srcXInBytes = offset;
    c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = const_cast<void*>(host);
  }
  return c;
}

CUresult host_to_array(CUarray array, size_t offset, const void* src, size_t bytes, CUstream stream,
                       cr::Fn fn) {
  if (bytes == 0) return CUDA_SUCCESS;
  if (src == nullptr || array == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (fn == cr::Fn::cuMemcpyHtoAAsync_v2 && cr::capturing(stream)) {
    return cr::capture_copy_node(stream, array_box(array, offset, src, bytes, true));
  }
  const auto* from = static_cast<const std::byte*>(src);
  return cr::in_chunks(bytes, [&](size_t done, size_t chunk) {
    const cr::ArrayCopyRequest request{array, offset + done, chunk, stream};
    return cr::remote_sync(
        fn,
        [&](gvirtus::WireWriter& w) {
          gvirtus::put_record(w, request);
          w.put_raw(from + done, chunk);
        },
        [](gvirtus::WireReader&) {});
  });
}

CUresult array_to_host(void* dst, CUarray array, size_t offset, size_t bytes, CUstream stream,
                       cr::Fn fn) {
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == nullptr || array == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (fn == cr::Fn::cuMemcpyAtoHAsync_v2 && cr::capturing(stream)) {
    return cr::capture_copy_node(stream, array_box(array, offset, dst, bytes, false));
  }
  auto* to = static_cast<std::byte*>(dst);
  return cr::in_chunks(bytes, [&](size_t done, size_t chunk) {
    const cr::ArrayCopyRequest request{array, offset + done, chunk, stream};
    return cr::remote_sync(
        fn, [&](gvirtus::WireWriter& w) { gvirtus::put_record(w, request); },
        [&](gvirtus::WireReader& r) { cr::land_chunk(r, to + done, chunk); });
  });
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyHtoA_v2(CUarray dstArray,
                                                                           size_t dstOffset,
                                                                           const void* srcHost,
                                                                           size_t ByteCount) {
  return host_to_array(dstArray, dstOffset, srcHost, ByteCount, nullptr, cr::Fn::cuMemcpyHtoA_v2);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyHtoAAsync_v2(
    CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount, CUstream hStream) {
  return host_to_array(dstArray, dstOffset, srcHost, ByteCount, hStream,
                       cr::Fn::cuMemcpyHtoAAsync_v2);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyAtoH_v2(void* dstHost,
                                                                           CUarray srcArray,
                                                                           size_t srcOffset,
                                                                           size_t ByteCount) {
  return array_to_host(dstHost, srcArray, srcOffset, ByteCount, nullptr, cr::Fn::cuMemcpyAtoH_v2);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyAtoHAsync_v2(
    void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream) {
  return array_to_host(dstHost, srcArray, srcOffset, ByteCount, hStream,
                       cr::Fn::cuMemcpyAtoHAsync_v2);
}

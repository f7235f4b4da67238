// The copies between host and device memory of the client libcuda.so.1: the host side is the
// application's memory, so its bytes travel (common/driver_wire.h), in chunks of at most
// kCopyChunkBytes. Host to device is sent ahead when asynchronous: the data is in the request,
// so the application may reuse its buffer at once, as the driver allows for pageable memory.
#include <cuda.h>

#include <algorithm>

#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

CUresult host_to_device(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream,
                        bool ahead) {
  if (bytes == 0) return CUDA_SUCCESS;
  if (src == nullptr || dst == 0) return CUDA_ERROR_INVALID_VALUE;
  const auto* from = static_cast<const std::byte*>(src);
  for (size_t done = 0; done < bytes;) {
    const size_t chunk = std::min(kCopyChunkBytes, bytes - done);
    const CopyRequest request{dst + done, chunk, stream};
    auto encode = [&](WireWriter& w) {
      put_record(w, request);
      w.put_raw(from + done, chunk);
    };
    const Fn fn = ahead || stream != nullptr ? Fn::cuMemcpyHtoDAsync_v2 : Fn::cuMemcpyHtoD_v2;
    const CUresult result =
        ahead ? remote_async(fn, encode) : remote_sync(fn, encode, [](WireReader&) {});
    if (result != CUDA_SUCCESS) return result;
    done += chunk;
  }
  return CUDA_SUCCESS;
}

CUresult device_to_host(void* dst, CUdeviceptr src, size_t bytes, CUstream stream, Fn fn) {
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == nullptr || src == 0) return CUDA_ERROR_INVALID_VALUE;
  auto* to = static_cast<std::byte*>(dst);
  for (size_t done = 0; done < bytes;) {
    const size_t chunk = std::min(kCopyChunkBytes, bytes - done);
    const CopyRequest request{src + done, chunk, stream};
    const CUresult result = remote_sync(
        fn, [&](WireWriter& w) { put_record(w, request); },
        [&](WireReader& r) {
          if (r.remaining() == 0) return;  // a failure brings no data
          const auto data = r.get_blob(chunk);
          std::copy(data.begin(), data.end(), to + done);
        });
    if (result != CUDA_SUCCESS) return result;
    done += chunk;
  }
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice,
                                                                           const void* srcHost,
                                                                           size_t ByteCount) {
  return cr::host_to_device(dstDevice, srcHost, ByteCount, nullptr, false);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyHtoDAsync_v2(
    CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream) {
  return cr::host_to_device(dstDevice, srcHost, ByteCount, hStream, true);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyDtoH_v2(void* dstHost,
                                                                           CUdeviceptr srcDevice,
                                                                           size_t ByteCount) {
  return cr::device_to_host(dstHost, srcDevice, ByteCount, nullptr, cr::Fn::cuMemcpyDtoH_v2);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyDtoHAsync_v2(
    void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return cr::device_to_host(dstHost, srcDevice, ByteCount, hStream, cr::Fn::cuMemcpyDtoHAsync_v2);
}

// The backend's handler of the 2D copies (cuMemcpy2D, cuMemcpy2DUnaligned, cuMemcpy2DAsync; wire:
// common/driver_wire.h's Copy2DRequest). Hostile until checked: the direction must be one of
// three, every device range the copy touches (pitch x (height - 1) + width bytes) the session's,
// and a host side's rows at most a chunk. The host side is memory of ours: the request's packed
// rows, or the reply's landing space, which an asynchronous copy fills before the reply leaves.
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/copies_2d.h"
#include "plugins/cuda/backend/landing_reply.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;

// The bytes a pitched range spans, or 0 when the numbers overflow.
uint64_t span_of(uint64_t pitch, uint64_t width, uint64_t height) {
  if (height == 0 || width == 0) return 0;
  if (pitch != 0 && height - 1 > (UINT64_MAX - width) / pitch) return 0;
  return pitch * (height - 1) + width;
}

CUresult vet_pitched(CUdeviceptr address, uint64_t pitch, uint64_t width, uint64_t height) {
  if (height > 1 && pitch < width) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t bytes = span_of(pitch, width, height);
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  return vet_device_pointer(address, bytes);
}

CUresult run(Fn fn, const CUDA_MEMCPY2D& copy, CUstream stream) {
  switch (fn) {
    case Fn::cuMemcpy2D_v2:
      return real().cuMemcpy2D_v2 != nullptr ? real().cuMemcpy2D_v2(&copy)
                                             : CUDA_ERROR_NOT_SUPPORTED;
    case Fn::cuMemcpy2DUnaligned_v2:
      return real().cuMemcpy2DUnaligned_v2 != nullptr ? real().cuMemcpy2DUnaligned_v2(&copy)
                                                      : CUDA_ERROR_NOT_SUPPORTED;
    default:
      return real().cuMemcpy2DAsync_v2 != nullptr ? real().cuMemcpy2DAsync_v2(&copy, stream)
                                                  : CUDA_ERROR_NOT_SUPPORTED;
  }
}

// Whether a stream the session holds is in the middle of a capture.
bool vetted_stream_capturing(CUstream stream) {
  if (vet(stream) != CUDA_SUCCESS || real().cuStreamIsCapturing == nullptr) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return real().cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace

bool run_copy_2d(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  if (fn != Fn::cuMemcpy2D_v2 && fn != Fn::cuMemcpy2DUnaligned_v2 && fn != Fn::cuMemcpy2DAsync_v2) {
    return false;
  }
  const bool with_stream = fn == Fn::cuMemcpy2DAsync_v2;
  const auto request = get_record<Copy2DRequest>(in);
  if (!with_stream && request.stream != nullptr) {
    raise(ErrorKind::kInvalidInput, "a stream on a synchronous 2D copy");
  }
  const auto direction = static_cast<Copy2DDirection>(request.direction);
  if (direction != Copy2DDirection::kHostToDevice && direction != Copy2DDirection::kDeviceToHost &&
      direction != Copy2DDirection::kDeviceToDevice) {
    raise(ErrorKind::kInvalidInput, "a 2D copy direction " + std::to_string(request.direction));
  }
  const bool host_side = direction != Copy2DDirection::kDeviceToDevice;
  if (host_side && (request.height == 0 || request.width > kCopyChunkBytes ||
                    request.height > kCopyChunkBytes / std::max<uint64_t>(request.width, 1))) {
    raise(ErrorKind::kInvalidInput, "2D copy rows over a chunk");
  }
  const uint64_t packed = request.width * request.height;  // bounded above for a host side
  std::span<const std::byte> rows;
  if (direction == Copy2DDirection::kHostToDevice) rows = in.get_raw(packed);
  in.expect_end();

  if (with_stream && host_side && vetted_stream_capturing(request.stream)) {
    out.put<int32_t>(result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);  // see custom_handlers.cpp
    return true;
  }
  CUDA_MEMCPY2D copy{};
  copy.WidthInBytes = request.width;
  copy.Height = request.height;
  CUresult vetted = with_stream ? vet(request.stream) : CUDA_SUCCESS;
  if (direction != Copy2DDirection::kHostToDevice) {  // a device source
    vetted =
        first_failure(CUDA_SUCCESS, vetted,
                      vet_pitched(request.src, request.src_pitch, request.width, request.height));
    copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.srcDevice = request.src;
    copy.srcPitch = request.src_pitch;
  }
  if (direction != Copy2DDirection::kDeviceToHost) {  // a device destination
    vetted =
        first_failure(CUDA_SUCCESS, vetted,
                      vet_pitched(request.dst, request.dst_pitch, request.width, request.height));
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.dstDevice = request.dst;
    copy.dstPitch = request.dst_pitch;
  }
  if (direction == Copy2DDirection::kHostToDevice) {
    copy.srcMemoryType = CU_MEMORYTYPE_HOST;
    copy.srcHost = rows.data();
    copy.srcPitch = request.width;
    // An asynchronous copy from memory that is gone when the call returns: wait for it.
    result = vetted == CUDA_SUCCESS ? run(fn, copy, request.stream) : vetted;
    if (result == CUDA_SUCCESS && with_stream) result = real().cuStreamSynchronize(request.stream);
    out.put<int32_t>(result);
    return true;
  }
  if (direction == Copy2DDirection::kDeviceToDevice) {
    result = vetted == CUDA_SUCCESS ? run(fn, copy, request.stream) : vetted;
    out.put<int32_t>(result);
    return true;
  }
  // Device to host: the reply's space is the landing buffer.
  result = vetted;
  landing_reply(out, result, packed, [&](std::byte* landing) {
    copy.dstMemoryType = CU_MEMORYTYPE_HOST;
    copy.dstHost = landing;
    copy.dstPitch = request.width;
    const CUresult r = run(fn, copy, request.stream);
    return r == CUDA_SUCCESS && with_stream ? real().cuStreamSynchronize(request.stream) : r;
  });
  return true;
}

}  // namespace gvirtus::cuda

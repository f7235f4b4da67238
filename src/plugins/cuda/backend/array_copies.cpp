// Copies between the client's memory and CUDA arrays (wire: common/driver_wire.h's
// ArrayCopyRequest), as the linear host copies go: the array and the stream must be the
// session's, a chunk at most kCopyChunkBytes (more is malformed); the array's bounds are the
// driver's to check (an array is its own object, with its extent). An asynchronous copy into the
// client's memory is waited for before the reply, which is its landing buffer, leaves; a stream
// in the middle of a capture takes neither.
#include "plugins/cuda/backend/array_copies.h"

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

ArrayCopyRequest checked_request(WireReader& in, bool with_stream, const char* what) {
  const auto request = get_record<ArrayCopyRequest>(in);
  if (!with_stream && request.stream != nullptr) {
    raise(ErrorKind::kInvalidInput, std::string("a stream on ") + what);
  }
  if (request.bytes > kCopyChunkBytes) {
    raise(ErrorKind::kInvalidInput,
          std::string(what) + " chunk of " + std::to_string(request.bytes) + " bytes");
  }
  return request;
}

void host_to_array(WireReader& in, WireWriter& out, CUresult& result, bool with_stream) {
  const auto request = checked_request(in, with_stream, "cuMemcpyHtoA");
  const auto data = in.get_raw(request.bytes);
  in.expect_end();
  result = services::first_failure(CUDA_SUCCESS, vet(request.array),
                                   with_stream ? vet(request.stream) : CUDA_SUCCESS);
  if (result == CUDA_SUCCESS && with_stream) result = not_capturing(request.stream);
  const void* entry = with_stream ? reinterpret_cast<const void*>(real().cuMemcpyHtoAAsync_v2)
                                  : reinterpret_cast<const void*>(real().cuMemcpyHtoA_v2);
  if (result == CUDA_SUCCESS && entry == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) {
    // The request's bytes are pageable memory of ours: the driver stages them before returning.
    result = with_stream ? real().cuMemcpyHtoAAsync_v2(request.array, request.offset, data.data(),
                                                       request.bytes, request.stream)
                         : real().cuMemcpyHtoA_v2(request.array, request.offset, data.data(),
                                                  request.bytes);
  }
  out.put<int32_t>(result);
}

void array_to_host(WireReader& in, WireWriter& out, CUresult& result, bool with_stream) {
  const auto request = checked_request(in, with_stream, "cuMemcpyAtoH");
  in.expect_end();
  result = services::first_failure(CUDA_SUCCESS, vet(request.array),
                                   with_stream ? vet(request.stream) : CUDA_SUCCESS);
  const bool present =
      with_stream ? real().cuMemcpyAtoHAsync_v2 != nullptr && real().cuStreamSynchronize != nullptr
                  : real().cuMemcpyAtoH_v2 != nullptr;
  if (result == CUDA_SUCCESS && with_stream) result = not_capturing(request.stream);
  if (result == CUDA_SUCCESS && !present) result = CUDA_ERROR_NOT_SUPPORTED;
  landing_reply(out, result, request.bytes, [&](std::byte* landing) {
    if (!with_stream) {
      return real().cuMemcpyAtoH_v2(landing, request.array, request.offset, request.bytes);
    }
    const CUresult r = real().cuMemcpyAtoHAsync_v2(landing, request.array, request.offset,
                                                   request.bytes, request.stream);
    return r == CUDA_SUCCESS ? real().cuStreamSynchronize(request.stream) : r;
  });
}

}  // namespace

bool run_array_copy(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuMemcpyHtoA_v2:
      host_to_array(in, out, result, false);
      return true;
    case Fn::cuMemcpyHtoAAsync_v2:
      host_to_array(in, out, result, true);
      return true;
    case Fn::cuMemcpyAtoH_v2:
      array_to_host(in, out, result, false);
      return true;
    case Fn::cuMemcpyAtoHAsync_v2:
      array_to_host(in, out, result, true);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda

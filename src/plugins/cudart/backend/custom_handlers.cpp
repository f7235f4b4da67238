// Hand-written backend handlers for the custom rows of cudart_calls.txt.
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/common/memcpy_wire.h"

namespace gvirtus::cudart {
namespace {

cudaError_t run_memcpy(WireReader& in, WireWriter& out) {
  void* dst = get_value<void*>(in);
  const void* src = get_value<const void*>(in);
  const uint64_t count = in.get<uint64_t>();
  const auto kind = static_cast<cudaMemcpyKind>(in.get<int32_t>());
  if (count > kMemcpyChunkBytes) {
    raise(ErrorKind::kInvalidInput, "cudaMemcpy chunk of " + std::to_string(count) + " bytes");
  }
  cudaError_t result;
  const size_t at = out.size();
  out.put<int32_t>(cudaSuccess);
  switch (kind) {
    case cudaMemcpyHostToDevice: {
      const auto data = in.get_raw(count);
      in.expect_end();
      result = ::cudaMemcpy(dst, data.data(), count, kind);
      break;
    }
    case cudaMemcpyDeviceToHost: {
      in.expect_end();
      out.put<uint64_t>(count);
      std::byte* landing = out.put_space(count);  // the reply buffer is the staging buffer
      result = ::cudaMemcpy(landing, src, count, kind);
      break;
    }
    case cudaMemcpyHostToHost: {
      const auto data = in.get_raw(count);
      in.expect_end();
      out.put<uint64_t>(count);
      std::byte* landing = out.put_space(count);
      result = ::cudaMemcpy(landing, data.data(), count, kind);
      break;
    }
    default:  // device to device, or a kind the runtime itself must judge
      in.expect_end();
      result = ::cudaMemcpy(dst, src, count, kind);
      break;
  }
  out.store_at<int32_t>(at, result);
  // A failed copy returns no data, so the caller's buffer stays untouched, as natively.
  if (result != cudaSuccess) out.truncate(at + sizeof(int32_t));
  return result;
}

}  // namespace

bool run_custom(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaMemcpy:
      result = run_memcpy(in, out);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cudart

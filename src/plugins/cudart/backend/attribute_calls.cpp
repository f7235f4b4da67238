// Attribute calls: a kernel node's (cudaGraphKernelNodeGetAttribute/SetAttribute, from
// graph_node_calls.cpp) and a stream's (cudaStreamGetAttribute/SetAttribute, custom rows 269-270).
// The attribute's id goes to the runtime as its bits (it refuses one it does not know) when it is
// one of the enum's values: an id past the last cuda_runtime_api.h names is refused here, as the
// runtime refuses it, since its bits would be no value of cudaLaunchAttributeID to pass. The value
// goes as its bytes; the target and the events a value names are vetted as the session's.
#include <cuda_runtime_api.h>

#include <cstring>

#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/graph_wire.h"

namespace gvirtus::cudart {
namespace {

constexpr int32_t kLastLaunchAttribute = cudaLaunchAttributeNvlinkUtilCentricScheduling;

}  // namespace

cudaError_t run_attribute_call(
    WireReader& in, WireWriter& out, bool set, FunctionRef<cudaError_t()> vet_target,
    FunctionRef<cudaError_t(cudaLaunchAttributeID, cudaLaunchAttributeValue*)> apply) {
  const int32_t bits = in.get<int32_t>();
  cudaLaunchAttributeValue value{};
  if (set) std::memcpy(&value, in.get_raw(sizeof value).data(), sizeof value);
  in.expect_end();
  cudaError_t result = vet_target();
  if (result == cudaSuccess && (bits < 0 || bits > kLastLaunchAttribute)) {
    result = cudaErrorInvalidValue;
  }
  if (result == cudaSuccess && set) result = vet_launch_attribute(bits, value);
  if (result == cudaSuccess) result = apply(static_cast<cudaLaunchAttributeID>(bits), &value);
  out.put<int32_t>(result);
  if (result == cudaSuccess && !set) out.put_raw(&value, sizeof value);
  return result;
}

cudaError_t run_stream_attribute(Fn fn, WireReader& in, WireWriter& out) {
  const auto stream = handle_from_wire<cudaStream_t>(in.get<uint64_t>());
  const bool set = fn == Fn::cudaStreamSetAttribute;
  return run_attribute_call(
      in, out, set, [&] { return vet(stream); },
      [&](cudaLaunchAttributeID attribute, cudaLaunchAttributeValue* value) {
        return set ? ::cudaStreamSetAttribute(stream, attribute, value)
                   : ::cudaStreamGetAttribute(stream, attribute, value);
      });
}

}  // namespace gvirtus::cudart

// A stream's attributes (wire: common/driver_wire.h's StreamAttributeRequest). The stream must be
// the session's; an attribute the driver does not take for streams is answered as it answers it
// (CUDA_ERROR_INVALID_VALUE) without reaching it, since some launch attributes carry handles. A
// value is plain data then (the access policy window's base is a device address the driver hands
// to the cache, never reads).
#include "plugins/cuda/backend/stream_attributes.h"

#include <cstring>

#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

bool run_stream_attribute(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  if (fn != Fn::cuStreamSetAttribute && fn != Fn::cuStreamGetAttribute) return false;
  const auto request = get_record<StreamAttributeRequest>(in);
  CUstreamAttrValue value{};
  const auto bytes = in.get_raw(sizeof value);
  std::memcpy(&value, bytes.data(), sizeof value);
  in.expect_end();
  const bool set = fn == Fn::cuStreamSetAttribute;
  result = stream_attribute(request.attribute) ? vet(request.stream) : CUDA_ERROR_INVALID_VALUE;
  // Only an id stream_attribute knows becomes the enum (another's bits may be none of its values).
  const auto attribute =
      result == CUDA_SUCCESS ? static_cast<CUstreamAttrID>(request.attribute) : CUstreamAttrID{};
  const void* entry = set ? reinterpret_cast<const void*>(real().cuStreamSetAttribute)
                          : reinterpret_cast<const void*>(real().cuStreamGetAttribute);
  if (result == CUDA_SUCCESS && entry == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) {
    result = set ? real().cuStreamSetAttribute(request.stream, attribute, &value)
                 : real().cuStreamGetAttribute(request.stream, attribute, &value);
  }
  out.put<int32_t>(result);
  if (!set) {
    if (result != CUDA_SUCCESS) value = CUstreamAttrValue{};
    out.put_raw(&value, sizeof value);
  }
  return true;
}

}  // namespace gvirtus::cuda

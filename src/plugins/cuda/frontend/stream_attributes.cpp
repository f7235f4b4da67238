// A stream's attributes in the client libcuda.so.1 (cuStreamSetAttribute, cuStreamGetAttribute;
// wire: common/driver_wire.h's StreamAttributeRequest): the value travels as the union's bytes.
#include <cuda.h>

#include <cstring>

#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuStreamSetAttribute(
    CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* value) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const cr::StreamAttributeRequest request{hStream, static_cast<uint32_t>(attr)};
  return cr::remote_sync(
      cr::Fn::cuStreamSetAttribute,
      [&](gvirtus::WireWriter& w) {
        gvirtus::put_record(w, request);
        w.put_raw(value, sizeof *value);
      },
      [](gvirtus::WireReader&) {});
}

extern "C" __attribute__((visibility("default"))) CUresult cuStreamGetAttribute(
    CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value_out) {
  if (value_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const cr::StreamAttributeRequest request{hStream, static_cast<uint32_t>(attr)};
  CUstreamAttrValue value{};
  const CUresult result = cr::remote_sync(
      cr::Fn::cuStreamGetAttribute,
      [&](gvirtus::WireWriter& w) {
        gvirtus::put_record(w, request);
        w.put_raw(&value, sizeof value);
      },
      [&](gvirtus::WireReader& r) {
        const auto bytes = r.get_raw(sizeof value);
        std::memcpy(&value, bytes.data(), sizeof value);
      });
  if (result == CUDA_SUCCESS) *value_out = value;
  return result;
}

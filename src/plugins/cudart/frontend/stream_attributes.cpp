// cudaStreamGetAttribute and cudaStreamSetAttribute (custom rows 269-270), and their per-thread
// default stream forms: the attribute's id and value travel as a kernel node's do (the value's
// 64 bytes); the runtime checks the id and the value, the backend what the value names.
#include <cstring>

#include "common/call_marshal.h"
#include "plugins/cudart/common/graph_wire.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamGetAttribute(cudaStream_t hStream,
                                                         cudaLaunchAttributeID attr,
                                                         cudaLaunchAttributeValue* value_out) {
  if (value_out == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  return cr::remote_sync(
      cr::Fn::cudaStreamGetAttribute,
      [&](gvirtus::WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(hStream));
        w.put<int32_t>(gvirtus::marshal::enum_bits(attr));
      },
      [&](gvirtus::WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the output stays as it was
        std::memcpy(value_out, r.get_raw(sizeof *value_out).data(), sizeof *value_out);
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamSetAttribute(cudaStream_t hStream,
                                                         cudaLaunchAttributeID attr,
                                                         const cudaLaunchAttributeValue* value) {
  if (value == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  return cr::remote_sync(
      cr::Fn::cudaStreamSetAttribute,
      [&](gvirtus::WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(hStream));
        w.put<int32_t>(gvirtus::marshal::enum_bits(attr));
        w.put_raw(value, sizeof *value);
      },
      [](gvirtus::WireReader&) {});
}

// The per-thread default stream's forms: a null stream is the calling thread's own.
GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream,
                                                              cudaLaunchAttributeID attr,
                                                              cudaLaunchAttributeValue* value_out) {
  return cudaStreamGetAttribute(hStream == nullptr ? cudaStreamPerThread : hStream, attr,
                                value_out);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamSetAttribute_ptsz(
    cudaStream_t hStream, cudaLaunchAttributeID attr, const cudaLaunchAttributeValue* value) {
  return cudaStreamSetAttribute(hStream == nullptr ? cudaStreamPerThread : hStream, attr, value);
}

// cudaDeviceGetPCIBusId / cudaDeviceGetByPCIBusId: string arguments (custom rows of the table).
#include <algorithm>
#include <cstring>

#include "plugins/cudart/frontend/stub_call.h"

using gvirtus::WireReader;
using gvirtus::WireWriter;
namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  const bool has_buffer = pciBusId != nullptr;
  return cr::remote_sync(
      cr::Fn::cudaDeviceGetPCIBusId,
      [&](WireWriter& w) {
        w.put<uint8_t>(has_buffer ? 1 : 0);
        w.put<int32_t>(len);
        w.put<int32_t>(device);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // failed: the caller's buffer stays untouched
        const auto text = r.get_blob(len > 0 ? static_cast<size_t>(len) : 0);
        if (has_buffer) std::memcpy(pciBusId, text.data(), text.size());
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* pciBusId) {
  return cr::remote_sync(
      cr::Fn::cudaDeviceGetByPCIBusId,
      [&](WireWriter& w) {
        cr::put_output(w, device);
        w.put<uint8_t>(pciBusId != nullptr ? 1 : 0);
        if (pciBusId != nullptr) w.put_string(pciBusId);
      },
      [&](WireReader& r) { cr::get_output(r, device); });
}

// cudaMemcpyDefault for the stub: the direction a copy takes, inferred from the pointers as the
// runtime infers it with unified addressing. Device pointers are those of the device
// allocations the stub recorded (address_ranges.h); everything else is host memory.
#pragma once

#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {

// Whether a caller's kind is one an enum object may hold (a C caller may pass any int): others
// get cudaErrorInvalidMemcpyDirection here, as the runtime answers them, and never travel.
inline bool kind_in_range(const cudaMemcpyKind& kind) {
  return enum_holds<cudaMemcpyKind>(enum_bits(kind));
}

inline cudaMemcpyKind resolve_kind(cudaMemcpyKind kind, const void* dst, const void* src) {
  if (kind != cudaMemcpyDefault) return kind;
  const bool from_device = is_device_pointer(src);
  const bool to_device = is_device_pointer(dst);
  if (from_device) return to_device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
  return to_device ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost;
}

// Whether the host side of a copy of `kind` is its source (true) or its destination.
inline bool host_is_source(cudaMemcpyKind kind) {
  return kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost;
}
inline bool host_is_destination(cudaMemcpyKind kind) {
  return kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost;
}

// Checks a copy's host side before the stub touches it: the runtime reports an uninitialisable
// runtime before it reads host memory, and a null host pointer as an invalid value.
inline cudaError_t check_host_side(const void* dst, const void* src, size_t count,
                                   cudaMemcpyKind kind) {
  const bool reads_host = host_is_source(kind);
  const bool writes_host = host_is_destination(kind);
  if (count == 0 || (!reads_host && !writes_host)) return cudaSuccess;
  if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) return init;
  if ((reads_host && src == nullptr) || (writes_host && dst == nullptr)) {
    return record_local_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

}  // namespace gvirtus::cudart

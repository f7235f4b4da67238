// Address ranges the stub knows the nature of: the device allocations it saw succeed, and the
// host memory it allocated (cudaMallocHost/HostAlloc) or registered (cudaHostRegister). They let
// cudaMemcpyDefault tell device from host pointers and cudaPointerGetAttributes answer for host
// memory, which the backend cannot see. Thread-safe; lookups take a shared lock.
#pragma once

#include <cstddef>

#include "common/address_ranges.h"

namespace gvirtus::cudart {

using gvirtus::AddressRanges;

// Device allocations; flags: kPlainDeviceMemory when cudaPointerGetAttributes may be answered
// from the record (memory of a stream-ordered pool may be located elsewhere: asked remotely).
AddressRanges& device_allocations();
inline constexpr unsigned kPlainDeviceMemory = 1;
AddressRanges& host_allocations();    // cudaMallocHost / cudaHostAlloc, flags as given
AddressRanges& host_registrations();  // cudaHostRegister, flags as given

// Whether a pointer is device memory as far as the stub knows (its device allocations).
inline bool is_device_pointer(const void* p) {
  return device_allocations().find(p).has_value();
}

// Whether [ptr, ptr + bytes) lies in one device allocation the stub saw (memset.cpp).
bool within_device_allocation(const void* ptr, size_t bytes);

}  // namespace gvirtus::cudart

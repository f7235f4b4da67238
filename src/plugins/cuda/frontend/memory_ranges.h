// What the client libcuda.so.1 knows of addresses: the device allocations its calls made (the
// descriptor's allocation_hooks record them) and the host memory it allocated or registered. They
// let cuMemcpy tell device from host pointers (unified addressing) and host memory queries be
// answered here, since the backend cannot see the client's memory.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>

#include "common/address_ranges.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

AddressRanges& device_ranges();
AddressRanges& host_allocations();    // cuMemAllocHost / cuMemHostAlloc, flags as given
AddressRanges& host_registrations();  // cuMemHostRegister, flags as given

// The allocation hooks of the generated stub (cuda_descriptor.json).
void note_allocated(Fn fn, CUdeviceptr address, uint64_t bytes);
// Forgets what was noted at `address` by the time the allocation clock read `noted_by` (read
// before the free was sent: an allocation another thread got at the address since stays).
void note_freed(Fn fn, CUdeviceptr address, uint64_t noted_by);
uint64_t allocation_clock();

// Whether every page of [address, address + bytes) is mapped in this process: an address the stub
// does not know is taken for the client's memory, and one that is not (a device address the stub
// never saw, from another path) must be refused, not read (mincore(2) says ENOMEM).
bool host_mapped(const void* address, size_t bytes);

// The device pointer of an address in a page-locked block of the memory shared with the backend
// (host_memory.cpp), or 0 when it lies in none.
CUdeviceptr shared_device_pointer(const void* address);

// Where [address, address + bytes) lies in the memory shared with the backend, when it is inside
// one page-locked block of it (host_memory.cpp): copies of it travel as that place
// (driver_wire.h's CopyRequest::shared_offset), not as bytes. nullopt otherwise.
std::optional<uint64_t> shared_offset(const void* address, size_t bytes);

// A page-locked block of `bytes` in the memory shared with the backend, registered there (pinned
// staging for copies of pageable memory: common/pinned_staging.h); null when there is none to be
// had. free_shared_block gives one back.
std::byte* shared_block(size_t bytes);
void free_shared_block(std::byte* block);
// The memory shared with the backend of the current session (its identity), or null.
const void* shared_arena();

inline const void* as_pointer(CUdeviceptr address) {
  return reinterpret_cast<const void*>(static_cast<uintptr_t>(address));
}

}  // namespace gvirtus::cuda

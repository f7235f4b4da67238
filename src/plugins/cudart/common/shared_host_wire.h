// Page-locked host memory in shared memory, on the wire (custom rows 93-97 of cudart_calls.txt).
//
// Over a transport that shares memory with the backend (Connection::shared_memory(), shm's arena),
// the stub places cudaMallocHost/cudaHostAlloc memory there. Both sides name a place in it by its
// offset from the start of the shared memory (the two processes may map it at different
// addresses).
//
//   cudaHostRegisterShared   u64 offset, u64 bytes, u32 cudaHostAlloc flags
//                            -> i32 result, u64 device pointer (registered mapped whatever the
//                            flags, as unified addressing maps every page-locked allocation)
//   cudaHostUnregisterShared u64 offset -> i32 result
//   cudaMemcpyShared*        u64 device pointer, u64 offset, u64 count, i32 kind (HostToDevice:
//                            from the shared memory; DeviceToHost: into it), [u64 stream for the
//                            Async rows] -> i32 result. No data travels: the backend's runtime
//                            reads or writes the shared memory itself, pinned, with the GPU's DMA.
#pragma once

#include <cstdint>

namespace gvirtus::cudart {

// Shared host allocations are whole pages: the backend registers them with the GPU.
inline constexpr uint64_t kSharedHostAlign = 4096;

}  // namespace gvirtus::cudart

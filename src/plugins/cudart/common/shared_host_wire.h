// Page-locked host memory in shared memory, on the wire (custom rows 93-97 of cudart_calls.txt).
//
// Over a transport that shares memory with the backend (Connection::shared_memory(), shm's arena),
// the stub places cudaMallocHost/cudaHostAlloc memory there. Both sides name a place in it by its
// offset from the start of the shared memory (the two processes may map it at different
// addresses).
//
// Each request is one record, defined once here for the stub and the backend
// (common/wire_record.h):
//   cudaHostRegisterShared   RegisterShared -> i32 result, RegisteredShared (the device pointer:
//                            registered mapped whatever the flags, as unified addressing maps
//                            every page-locked allocation)
//   cudaHostUnregisterShared UnregisterShared -> i32 result
//   cudaMemcpyShared, cudaMemcpySharedAsync
//                            SharedCopy (HostToDevice: from the shared memory; DeviceToHost: into
//                            it; the synchronous row's stream is null) -> i32 result. No data
//                            travels: the backend's runtime reads or writes the shared memory
//                            itself, pinned, with the GPU's DMA.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <tuple>

namespace gvirtus::cudart {

// Shared host allocations are whole pages: the backend registers them with the GPU.
inline constexpr uint64_t kSharedHostAlign = 4096;

struct RegisterShared {
  uint64_t offset;
  uint64_t bytes;
  uint32_t flags;  // cudaHostAlloc's
  static constexpr auto kFields =
      std::tuple{&RegisterShared::offset, &RegisterShared::bytes, &RegisterShared::flags};
};

struct RegisteredShared {
  uint64_t device;
  static constexpr auto kFields = std::tuple{&RegisteredShared::device};
};

struct UnregisterShared {
  uint64_t offset;
  static constexpr auto kFields = std::tuple{&UnregisterShared::offset};
};

struct SharedCopy {
  void* device;
  uint64_t offset;
  uint64_t count;
  cudaMemcpyKind kind;
  cudaStream_t stream;
  static constexpr auto kFields =
      std::tuple{&SharedCopy::device, &SharedCopy::offset, &SharedCopy::count, &SharedCopy::kind,
                 &SharedCopy::stream};
};

}  // namespace gvirtus::cudart

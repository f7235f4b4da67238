// Page-locked host memory in the transport's shared memory (common/shared_host_wire.h).
//
// Over shm the backend maps the session's arena too, so cudaMallocHost/cudaHostAlloc memory placed
// there is memory the GPU reaches: the backend registers it (pinned and mapped, as unified
// addressing maps every page-locked allocation), and copies to or from it send an offset instead
// of the bytes. Over a
// transport that shares nothing, or when the arena is full, nothing here applies and callers use
// ordinary client memory. Thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/wire.h"

namespace gvirtus::cudart {

struct SharedHostPlacement {
  bool placed = false;  // false: no shared memory, or not enough; allocate locally
  void* ptr = nullptr;
};

// Places `size` bytes (whole pages) in the shared memory and has the backend register them with
// `flags` (cudaHostAlloc's). A backend failure is returned (nothing stays allocated).
cudaError_t shared_host_alloc(size_t size, unsigned flags, SharedHostPlacement& placement);

// Frees the shared block that starts at `ptr`; nullopt when `ptr` starts none.
std::optional<cudaError_t> shared_host_free(void* ptr);

// The offset in the current session's shared memory of [ptr, ptr + count), when that lies in one
// live shared block.
std::optional<uint64_t> shared_host_offset(const void* ptr, size_t count);

// The start of the current session's shared memory (nullptr when it shares none): identifies
// the arena, so that what was made in another session's can be told apart.
const std::byte* shared_host_arena();

// A cudaMemcpyShared* request (common/shared_host_wire.h); `stream` for the Async rows.
void put_shared_copy(WireWriter& w, const void* device, uint64_t offset, uint64_t count,
                     cudaMemcpyKind kind, const cudaStream_t* stream);

// The device pointer of `ptr` in a shared block (all are mapped, as under unified addressing).
std::optional<void*> shared_host_device_pointer(const void* ptr);

}  // namespace gvirtus::cudart

// The backend's side of page-locked host memory in shared memory (common/shared_host_wire.h):
// the session's shared memory, the ranges the client asked to register with the GPU, and the
// copies that name offsets in it. Every offset and size from the client is checked against the
// shared memory's bounds before use.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>

#include "common/wire.h"

namespace gvirtus::cudart {

// Called once per session (one session per worker process) with the transport's shared memory.
void set_shared_memory(std::span<std::byte> memory);

// Whether `address` lies in the session's shared memory (pages the client maps too).
bool in_shared_memory(const void* address);

cudaError_t run_host_register_shared(WireReader& in, WireWriter& out);
cudaError_t run_host_unregister_shared(WireReader& in, WireWriter& out);
// `with_stream`: the Async rows.
cudaError_t run_memcpy_shared(WireReader& in, WireWriter& out, bool with_stream);

}  // namespace gvirtus::cudart

// What the cudart backend checks of the handles and device pointers a client names, before they
// reach NVIDIA's runtime.
//
// Handles (streams, events, memory pools) are vetted by code generated from the descriptor
// (cudart_vetting.h) with the shared backend services (backend/services/): a call naming a handle
// its session does not hold gets cudaErrorInvalidResourceHandle without reaching the runtime,
// which would dereference it. This file adds what is cudart's own:
//
// A pointer the client names as device memory must be memory the runtime knows as device or
// managed memory, or page-locked memory inside the session's shared arena (whose device pointer is
// its host pointer). Anything else gets cudaErrorInvalidValue, what the runtime answers for a
// device pointer it does not know. Without this, cudaMemcpyDefault would copy from or into the
// worker's own memory at any address the client names (its code, its heap, the session's secret),
// and with HMM a memset would write there. (Modules' globals and arrays are device memory the
// allocation ledger never saw, so the runtime is asked rather than the ledger.)
//
// A rejected call never reaches the runtime, so the runtime's last error does not know of it: the
// rejection is kept as the executing thread's pending error (services/rejections.h), which
// cudaGetLastError and cudaPeekAtLastError report until a later call fails in the runtime itself.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "plugins/cudart/cudart_vetting.h"

namespace gvirtus::cudart {

// The device current on the calling thread (-1 when none): what a new handle belongs to, so that
// cudaDeviceReset of that device forgets its streams and events.
int current_device();

// cudaSuccess when [ptr, ptr + bytes) may be named as device memory by the client: null (the
// runtime judges it), device or managed memory, or registered memory in the shared arena. Both
// ends are checked. The runtime's own error when it cannot say (no driver: the call would fail
// the same way). `bytes` 0 checks the first byte only. (Declared by cudart_vetting.h.)
//   cudaError_t vet_device_pointer(const void* ptr, uint64_t bytes = 0);

// Device memory the runtime placed for a graph's memory allocation node
// (cudaGraphAddMemAllocNode): the client names it as device memory (a later node's, a launch's)
// although the runtime may not map it before the graph runs. Gone with the graph.
void note_graph_allocation(cudaGraph_t graph, const void* address, uint64_t bytes);
void forget_graph_allocations(cudaGraph_t graph);

// What a launch attribute's value names, vetted: the events of cudaLaunchAttributeProgrammaticEvent
// and cudaLaunchAttributeLaunchCompletionEvent must be the session's. Other values are plain
// figures the runtime checks itself (an unknown attribute id included).
cudaError_t vet_launch_attribute(int32_t id, const cudaLaunchAttributeValue& value);

// The stream of a copy, vetted: none for a synchronous copy (`with_stream` false), else the
// session's, and - when a host side is a buffer of ours (the request's bytes or the reply) - not
// capturing: a capture would keep the buffer's address in its graph, to be read or written each
// time the graph runs, long after the buffer is gone (cudaErrorStreamCaptureUnsupported; the stubs
// stage such copies instead: host_staging.h).
cudaError_t vet_copy_stream(cudaStream_t stream, bool with_stream, bool our_buffer);

// The first failure among already computed checks, or cudaSuccess.
template <typename... Results>
cudaError_t first_failure(Results... results) {
  return gvirtus::services::first_failure(cudaSuccess, results...);
}

}  // namespace gvirtus::cudart

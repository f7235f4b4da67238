// Graph nodes' parameters as they travel (wire: common/graph_node_wire.h), for the stub's node
// calls (graph_nodes.cpp): each kind's parameters packed from the program's structures, with
// what the stub refuses itself - a null pointer (after the runtime's initialisation failure, as
// natively), arguments in the "extra" form, and copy nodes that name the client's own memory, which
// the backend's GPU cannot reach when the graph runs (pageable memory, or page-locked memory over
// tcp: cudaErrorNotSupported, with a warning naming the call; the node calls stage such memory
// first: host_staging.h). Page-locked memory in shm's arena travels as its device pointer. A copy
// node's side may be a CUDA array: the extent then counts its elements, asked of the backend.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "common/wire.h"
#include "plugins/cudart/common/graph_node_wire.h"

namespace gvirtus::cudart {

// What a null pointer where the runtime wants one gets: the runtime's initialisation failure
// first, else cudaErrorInvalidValue; recorded as the thread's last error.
cudaError_t invalid_value();
// cudaErrorNotSupported for what gvirtus does not remote (logged with `call` and `why`), after
// the runtime's initialisation failure.
cudaError_t not_supported(const char* call, const char* why);

// A kernel node's parameters packed as a launch's; or the error that
// prevents it (the launch's own: an unknown kernel, a module that does not load).
struct PackedKernelParams {
  KernelNodeWire wire{};
  std::vector<std::byte> bytes;
};
cudaError_t pack(const cudaKernelNodeParams* params, PackedKernelParams& packed, const char* call);
void put_kernel(WireWriter& w, const PackedKernelParams& packed);

// A copy node's parameters (pitched pointers only), each side as the GPU reaches it.
cudaError_t pack(const cudaMemcpy3DParms* p, MemcpyNodeWire& wire, const char* call);
cudaError_t pack_1d(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                    Memcpy1DNodeWire& wire, const char* call);

MemsetNodeWire pack(const cudaMemsetParams& p);

// A memory allocation node's parameters; bad_access: a null array of entries, or too many.
void put_alloc(WireWriter& w, const cudaMemPoolProps& props, const cudaMemAccessDesc* access,
               size_t n, size_t bytes);
bool bad_access(const cudaMemAccessDesc* access, size_t n);

// The generic form's parameters, packed as their kind's own (graph_node_wire.h).
struct PackedNodeParams {
  int32_t type = 0;
  PackedKernelParams kernel;
  MemcpyNodeWire memcpy{};
  MemsetNodeWire memset{};
  // The event, the child graph, the freed address, the host function's token or the conditional
  // handle.
  uint64_t handle = 0;
  uint32_t ownership = 0;
  uint32_t conditional_type = 0;  // a conditional node's type and its number of bodies
  uint32_t conditional_size = 0;
  const cudaMemAllocNodeParamsV2* alloc = nullptr;
};
cudaError_t pack(const cudaGraphNodeParams* p, PackedNodeParams& packed, const char* call);
void put_node_params(WireWriter& w, const PackedNodeParams& packed);

}  // namespace gvirtus::cudart

// Graph nodes' parameters as the driver checks them (graph_node_params.cpp), shared by the calls
// that add a node, set a node's parameters and set them in an executable graph, and by a graph's
// launch, which performs memsets where the check found them. Each check refuses what it does not
// take with CUDA_ERROR_INVALID_VALUE (an unknown context of a memset: CUDA_ERROR_INVALID_CONTEXT)
// and leaves its output alone then. Under the state's lock, as everything of the graph model.
#pragma once

#include <cuda.h>

#include <cstddef>

#include "graph_model.h"

namespace gvirtus::simulated {

// A kernel node's parameters: func, or kern when func is null (a kernel's ctx then null or a live
// context), packed as a launch packs them (kernel_launch.h). The node's attributes are not these.
CUresult kernel_node(State& s, const CUDA_KERNEL_NODE_PARAMS& params, KernelNode& out);

// A memcpy node's: a copy cuMemcpy3D would take (both sides as they are now), in a live context
// or none.
CUresult memcpy_node(State& s, const CUDA_MEMCPY3D& copy, CUcontext ctx, MemcpyNode& out);

// A memset node's: elements of 1, 2 or 4 bytes, aligned, width x height of them in one range of
// device memory, rows `pitch` apart; in a live context or none.
CUresult memset_node(State& s, const CUDA_MEMSET_NODE_PARAMS& memset, CUcontext ctx,
                     MemsetNode& out);

// Where a memset's first element lies, its whole extent checked as memset_node checks it; null if
// it is not (any more) device memory.
std::byte* memset_target(State& s, const CUDA_MEMSET_NODE_PARAMS& memset);

// Whether an event is live: event nodes take only those.
bool known_event(const State& s, CUevent event);

// A live node of `type`, else null (an unknown handle, or a node of another type).
Node* node_of_type(State& s, CUgraphNode handle, CUgraphNodeType type);

}  // namespace gvirtus::simulated

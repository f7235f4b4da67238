// Graph copies of the application's own memory in the driver stub (host_staging.cpp; what both
// stubs share, and why: common/staged_copies.h; the backend's blocks:
// backend/services/staging_blocks.h). A copy node with one side in this process's memory becomes
// a child graph node of two: the stub's host function and a copy of the staging block, in the
// copy's order; one with both sides here, a child graph node of the stub's host function alone,
// which copies between them here when the graph reaches it. The stub answers for it as the copy
// node it is to the application (its type and its parameters), in the graph it was added to and in
// that graph's clones. A captured copy is such a node, added to the capture's graph after the
// capture's dependencies.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>

#include "common/staged_copies.h"

namespace gvirtus::cuda {

// Which sides of a copy node are this process's own memory (nothing the backend's GPU reaches).
using SidesHere = staging::Sides;
SidesHere sides_here(const CUDA_MEMCPY3D& copy);

// A capturing stream's copy to device memory from this process's memory, or back.
CUresult capture_staged_to_device(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
CUresult capture_staged_to_host(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
// A capturing stream's copy between this process's memory.
CUresult capture_host_copy(void* dst, const void* src, size_t bytes, CUstream stream);
// Any copy a capturing stream takes, as one copy node of the capture's graph (staged when a side
// is this process's memory) after the capture's dependencies, which it then replaces.
CUresult capture_copy_node(CUstream stream, const CUDA_MEMCPY3D& copy);

// A copy node with one or both sides here (`here`), as the application asked for it.
CUresult add_staged_copy_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                              size_t n, const CUDA_MEMCPY3D& copy, CUcontext context,
                              SidesHere here);
// New parameters for a staged copy node, in its graph (`executable` null) or in an executable
// graph: the application's own memory on the same sides as before. nullopt when `node` is no
// staged copy node the stub knows.
std::optional<CUresult> set_staged_copy_node(CUgraphExec executable, CUgraphNode node,
                                             const CUDA_MEMCPY3D& copy, CUcontext context);
// The parameters the application gave a staged copy node; false when `node` is none.
bool staged_copy_params(CUgraphNode node, CUDA_MEMCPY3D& copy);
bool is_staged_copy_node(CUgraphNode node);

// Bookkeeping: a clone has its own nodes for the staged ones; a destroyed node or graph goes.
void staged_copies_cloned(CUgraph original, CUgraph clone);
void forget_staged_node(CUgraphNode node);
void forget_staged_graph(CUgraph graph);

}  // namespace gvirtus::cuda

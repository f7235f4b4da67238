// Graph copies of the application's own memory in the runtime stub (host_staging.cpp; what both
// stubs share, and why: common/staged_copies.h; the backend's blocks:
// backend/services/staging_blocks.h). A copy node with one side in this process's memory
// (pageable, or page-locked over a transport without shared memory) becomes a child graph node of
// two: the stub's host function and a copy of the staging block, in the copy's order; one with
// both sides here, a child graph node of the stub's host function alone, which copies between
// them here when the graph reaches it. The stub answers for it as the copy node it is to the
// application (its type and its parameters), in the graph it was added to and in that graph's
// clones. A copy on a stream the stub began capturing is such a node, added to the capture's graph
// after the capture's dependencies.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>

#include "common/staged_copies.h"

namespace gvirtus::cudart {

// Which sides of a copy are this process's own memory (nothing the backend's GPU reaches).
using SidesHere = staging::Sides;
SidesHere sides_here(const cudaMemcpy3DParms& copy);

// A 1D copy node's parameters as the 3D form CUDA describes it with.
cudaMemcpy3DParms linear_copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);

// Any copy a capturing stream takes, as one copy node of the capture's graph (staged when a side
// is this process's memory) after the capture's dependencies, which it then replaces.
cudaError_t capture_copy_node(cudaStream_t stream, const cudaMemcpy3DParms& copy);

// A copy node with one or both sides here (`here`), as the application asked for it.
cudaError_t add_staged_copy_node(cudaGraphNode_t* node, cudaGraph_t graph,
                                 const cudaGraphNode_t* dependencies, size_t n,
                                 const cudaMemcpy3DParms& copy, SidesHere here);
// New parameters for a staged copy node, in its graph (`executable` null) or in an executable
// graph: the application's own memory on the same sides as before. nullopt when `node` is no
// staged copy node the stub knows.
std::optional<cudaError_t> set_staged_copy_node(cudaGraphExec_t executable, cudaGraphNode_t node,
                                                const cudaMemcpy3DParms& copy);
// The parameters the application gave a staged copy node; false when `node` is none.
bool staged_copy_params(cudaGraphNode_t node, cudaMemcpy3DParms& copy);
bool is_staged_copy_node(cudaGraphNode_t node);

// Bookkeeping: a clone has its own nodes for the staged ones; a destroyed node or graph goes.
void staged_copies_cloned(cudaGraph_t original, cudaGraph_t clone);
void forget_staged_node(cudaGraphNode_t node);
void forget_staged_graph(cudaGraph_t graph);

}  // namespace gvirtus::cudart

// The graph nodes a cuda backend session may name (CUgraphNode), the graphs child graph nodes own,
// and the device memory graphs' allocation nodes placed (the shared registry,
// services/graph_node_registry.h, says why nodes are kept).
//
// Thread affinity: locked. One session per worker process: forget_all_nodes() as a session opens.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace gvirtus::cuda {

// Records `node` as one of `graph`'s (a node the driver handed out: it may be known already).
void adopt_node(CUgraphNode node, CUgraph graph);
void adopt_nodes(const CUgraphNode* nodes, size_t n, CUgraph graph);

// CUDA_SUCCESS when the session may name `node` (null passes: the driver judges it); otherwise
// CUDA_ERROR_INVALID_VALUE (the driver's answer for a node it does not know), kept as the
// thread's refusal (services/rejections.h).
CUresult vet_node(CUgraphNode node);
CUresult vet_nodes(const CUgraphNode* nodes, size_t n);

// The graph `node` lies in (null when the session does not hold it).
CUgraph graph_of(CUgraphNode node);

// Records `child`, the graph a child graph node owns: adopted as a graph of the session, which it
// may use but not destroy (is_child_graph).
void adopt_child_graph(CUgraph child, CUgraphNode owner);
bool is_child_graph(CUgraph graph);

// Device memory an allocation node of `graph` placed: the session's device memory until freed
// (cuMemFree and cuMemFreeAsync free it too), or until the graph is destroyed before any
// executable graph was instantiated from it; after an instantiation it stays the session's past
// the graph's destruction, as the executable graph's launches place it (kept_graph_memory()).
void note_graph_allocation(CUgraph graph, CUdeviceptr address, uint64_t bytes);
// An executable graph was instantiated from `graph`.
void note_instantiated(CUgraph graph);
bool was_instantiated(CUgraph graph);
// The ledger's owner of graph memory whose graph is gone (AllocationLedger::hand_over).
const void* kept_graph_memory();

// Forgets `node` (destroyed), and the graph it owned with that graph's nodes.
void forget_node(CUgraphNode node);
// Forgets `graph`'s nodes, allocations and the child graphs its nodes owned, recursively.
void forget_graph_nodes(CUgraph graph);
// Forgets every node (a new session).
void forget_all_nodes();

}  // namespace gvirtus::cuda

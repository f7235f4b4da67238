// The graph nodes a backend session may name (cudaGraphNode_t), and the graphs that child graph
// nodes own.
//
// A node is the runtime's pointer into its graph: a made-up or stale one crashes the worker. So
// the session keeps every node the runtime handed it - a node added, or listed by a query of a
// graph of the session (cudaGraphGetNodes, the dependencies, the edges, cudaGraphNodeFindInClone)
// - with the graph it lies in, and forgets it when it is destroyed (cudaGraphDestroyNode) or its
// graph is (cudaGraphDestroy). A node is vetted together with its graph, which must still be the
// session's.
//
// A child graph node owns a graph (cudaGraphChildGraphNodeGetGraph): the session may use it as a
// graph (it is adopted as one), but not destroy it, and it goes with its node.
//
// Thread affinity: locked (a session's executors run on several threads). One session per worker
// process: the state is the process's, cleared when a session opens.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

namespace gvirtus::cudart {

// Records `node` as one of `graph`'s (a node the runtime handed out: it may be known already).
void adopt_node(cudaGraphNode_t node, cudaGraph_t graph);
void adopt_nodes(const cudaGraphNode_t* nodes, size_t n, cudaGraph_t graph);

// cudaSuccess when the session may name `node` (null passes: the runtime judges it); otherwise
// cudaErrorInvalidResourceHandle, kept as the thread's pending error (services/rejections.h).
cudaError_t vet_node(cudaGraphNode_t node);
// The same for each of `n` nodes.
cudaError_t vet_nodes(const cudaGraphNode_t* nodes, size_t n);

// The graph `node` lies in (null when the session does not hold it).
cudaGraph_t graph_of(cudaGraphNode_t node);

// Records `child`, the graph a child graph node owns: adopted as a graph of the session, and not
// one the session may destroy.
void adopt_child_graph(cudaGraph_t child, cudaGraphNode_t owner);
bool is_child_graph(cudaGraph_t graph);

// Forgets `node` (the runtime destroyed it), and the graph it owned with that graph's nodes.
void forget_node(cudaGraphNode_t node);
// Forgets `graph`'s nodes and the child graphs they owned, recursively.
void forget_graph_nodes(cudaGraph_t graph);

// Forgets every node (a new session).
void forget_all_nodes();

}  // namespace gvirtus::cudart

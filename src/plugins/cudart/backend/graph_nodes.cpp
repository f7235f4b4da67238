// The session's graph nodes and child graphs (graph_nodes.h), kept by the shared registry
// (services/graph_node_registry.h).
#include "plugins/cudart/backend/graph_nodes.h"

#include "backend/services/graph_node_registry.h"
#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {
namespace {

using services::GraphNodeRegistry;

cudaGraph_t as_graph(GraphNodeRegistry::Graph graph) {
  return const_cast<cudaGraph_t>(static_cast<const CUgraph_st*>(graph));
}

GraphNodeRegistry& registry() {
  // Never destroyed: a worker's exit may still run calls.
  static GraphNodeRegistry& r =
      *new GraphNodeRegistry([](auto graph, GraphNodeRegistry::Gone gone) {
        if (gone == GraphNodeRegistry::Gone::kChildGraph) {
          services::session_services().handles.release(static_cast<uint16_t>(HandleKind::kGraph),
                                                       as_graph(graph));
        }
        forget_graph_allocations(as_graph(graph));
      });
  return r;
}

}  // namespace

void adopt_node(cudaGraphNode_t node, cudaGraph_t graph) {
  registry().adopt(node, graph);
}

void adopt_nodes(const cudaGraphNode_t* nodes, size_t n, cudaGraph_t graph) {
  for (size_t i = 0; i < n; ++i) adopt_node(nodes[i], graph);
}

cudaError_t vet_node(cudaGraphNode_t node) {
  if (registry().may_name(node, [](auto graph) { return vet(as_graph(graph)) == cudaSuccess; })) {
    return cudaSuccess;
  }
  return static_cast<cudaError_t>(services::refuse(
      cudaErrorInvalidResourceHandle, "cudart", "graph node", node,
      "not a node of a graph this session holds (never listed, destroyed, or its graph was)"));
}

cudaError_t vet_nodes(const cudaGraphNode_t* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (const cudaError_t result = vet_node(nodes[i]); result != cudaSuccess) return result;
  }
  return cudaSuccess;
}

cudaGraph_t graph_of(cudaGraphNode_t node) {
  return as_graph(registry().graph_of(node));
}

void adopt_child_graph(cudaGraph_t child, cudaGraphNode_t owner) {
  if (child == nullptr) return;
  registry().adopt_child(child, owner);
  adopt(child);
}

bool is_child_graph(cudaGraph_t graph) {
  return registry().is_child(graph);
}

void forget_node(cudaGraphNode_t node) {
  registry().forget_node(node);
}

void forget_graph_nodes(cudaGraph_t graph) {
  registry().forget_graph(graph);
}

void forget_all_nodes() {
  registry().clear();
}

}  // namespace gvirtus::cudart

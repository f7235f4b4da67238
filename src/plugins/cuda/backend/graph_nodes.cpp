// The cuda session's graph nodes, child graphs and graph allocations (graph_nodes.h), kept by the
// shared registry (services/graph_node_registry.h).
#include "plugins/cuda/backend/graph_nodes.h"

#include <mutex>
#include <set>

#include "backend/services/graph_node_registry.h"
#include "backend/services/session_services.h"
#include "cuda_vetting.h"

namespace gvirtus::cuda {
namespace {

using services::GraphNodeRegistry;

// The graphs an executable graph was instantiated from, while they live.
std::mutex& instantiated_mutex = *new std::mutex;
auto& instantiated_graphs = *new std::set<CUgraph>;

CUgraph as_graph(GraphNodeRegistry::Graph graph) {
  return const_cast<CUgraph>(static_cast<const CUgraph_st*>(graph));
}

GraphNodeRegistry& registry() {
  // Never destroyed: a worker's exit may still run calls.
  static GraphNodeRegistry& r =
      *new GraphNodeRegistry([](auto graph, GraphNodeRegistry::Gone gone) {
        if (gone == GraphNodeRegistry::Gone::kChildGraph) {
          services::session_services().handles.release(static_cast<uint16_t>(HandleKind::kGraph),
                                                       as_graph(graph));
        }
        // The memory its allocation nodes placed goes with it (the ledger keys it by the graph).
        services::session_services().allocations.owner_gone(graph);
      });
  return r;
}

}  // namespace

void adopt_node(CUgraphNode node, CUgraph graph) {
  registry().adopt(node, graph);
}

void adopt_nodes(const CUgraphNode* nodes, size_t n, CUgraph graph) {
  for (size_t i = 0; i < n; ++i) adopt_node(nodes[i], graph);
}

CUresult vet_node(CUgraphNode node) {
  if (registry().may_name(node, [](auto graph) { return vet(as_graph(graph)) == CUDA_SUCCESS; })) {
    return CUDA_SUCCESS;
  }
  return static_cast<CUresult>(services::refuse(
      CUDA_ERROR_INVALID_VALUE, "cuda", "graph node", node,
      "not a node of a graph this session holds (never listed, destroyed, or its graph was)"));
}

CUresult vet_nodes(const CUgraphNode* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (const CUresult result = vet_node(nodes[i]); result != CUDA_SUCCESS) return result;
  }
  return CUDA_SUCCESS;
}

CUgraph graph_of(CUgraphNode node) {
  return as_graph(registry().graph_of(node));
}

void adopt_child_graph(CUgraph child, CUgraphNode owner) {
  if (child == nullptr) return;
  registry().adopt_child(child, owner);
  adopt(child);
}

bool is_child_graph(CUgraph graph) {
  return registry().is_child(graph);
}

void note_graph_allocation(CUgraph graph, CUdeviceptr address, uint64_t bytes) {
  services::session_services().allocations.owned(
      graph, reinterpret_cast<const void*>(static_cast<uintptr_t>(address)), bytes,
      /*freeable=*/true);
}

void note_instantiated(CUgraph graph) {
  std::lock_guard lock(instantiated_mutex);
  instantiated_graphs.insert(graph);
}

bool was_instantiated(CUgraph graph) {
  std::lock_guard lock(instantiated_mutex);
  return instantiated_graphs.count(graph) != 0;
}

const void* kept_graph_memory() {
  static const char owner = 0;
  return &owner;
}

void forget_node(CUgraphNode node) {
  registry().forget_node(node);
}

void forget_graph_nodes(CUgraph graph) {
  registry().forget_graph(graph);
  std::lock_guard lock(instantiated_mutex);
  instantiated_graphs.erase(graph);
}

void forget_all_nodes() {
  registry().clear();
  std::lock_guard lock(instantiated_mutex);
  instantiated_graphs.clear();
}

}  // namespace gvirtus::cuda

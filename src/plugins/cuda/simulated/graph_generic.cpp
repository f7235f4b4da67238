// The generic cuGraphAddNode_v2 on the simulated device, for what only it can say: a child graph
// moved into its node (CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE), whose graph then belongs to the node
// under the handle it had (cuGraphChildGraphNodeGetGraph gives it back; cuGraphDestroy no longer
// takes it), and a conditional node (graph_conditionals.cpp). gvirtus's stub sends every other kind
// through its own call, so the simulated device takes no other here (CUDA_ERROR_NOT_SUPPORTED), nor
// edge data (its stub adds those as dependencies of their own).
#include <utility>

#include "state.h"

namespace sim = gvirtus::simulated;

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                    const CUgraphNode* dependencies,
                                                    const CUgraphEdgeData* dependencyData,
                                                    size_t numDependencies,
                                                    CUgraphNodeParams* nodeParams) {
  if (nodeParams == nullptr || phGraphNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL && dependencyData == nullptr) {
    return sim::guarded([&](sim::State& s) {
      return sim::add_conditional_node(s, phGraphNode, hGraph, dependencies, numDependencies,
                                       nodeParams->conditional);
    });
  }
  if (nodeParams->type != CU_GRAPH_NODE_TYPE_GRAPH || dependencyData != nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  const CUgraph child = nodeParams->graph.graph;
  if (nodeParams->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE) {
    return cuGraphAddChildGraphNode(phGraphNode, hGraph, dependencies, numDependencies, child);
  }
  if (nodeParams->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return sim::guarded([&](sim::State& s) {
    sim::Graph* graph = sim::find_graph(s, hGraph);
    const auto owned = s.graphs.find(child);  // a graph of its own: not a node's, not a capture's
    if (graph == nullptr || owned == s.graphs.end() || child == hGraph ||
        sim::has_memory_nodes(*owned->second)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // Added with a clone first, which the driver's own checks of the dependencies judge; then
    // the node takes the graph itself in place of the clone.
    sim::ChildNode params;
    params.graph = sim::clone_graph(*owned->second);
    const CUresult r = sim::add_node(s, *graph, dependencies, numDependencies,
                                     CU_GRAPH_NODE_TYPE_GRAPH, std::move(params), phGraphNode);
    if (r != CUDA_SUCCESS) return r;
    sim::Node* node = sim::find_node(s, *phGraphNode);
    std::get<sim::ChildNode>(node->params).graph = std::move(owned->second);
    s.graphs.erase(owned);
    return CUDA_SUCCESS;
  });
}

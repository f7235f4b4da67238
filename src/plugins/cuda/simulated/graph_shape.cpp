// A graph's shape on the simulated device: its edges and each node's dependencies and dependents
// read (the edge-data forms, with the driver's count and array conventions), edges added and
// removed, nodes destroyed, typed and found in a clone. An edge is (from, to, CUgraphEdgeData);
// at most one joins two nodes, and none closes a cycle (the driver's graphs are acyclic).
#include <algorithm>
#include <cstring>
#include <vector>

#include "graph_node_params.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

bool default_data(const CUgraphEdgeData& data) {
  static constexpr CUgraphEdgeData kDefault{};
  return std::memcmp(&data, &kDefault, sizeof data) == 0;
}

// Edge data the driver takes: no port into a node (none defines one), reserved bytes zero, a
// port out of a kernel node only, programmatic dependencies between kernel nodes only.
bool valid_data(const sim::Node& from, const sim::Node& to, const CUgraphEdgeData& data) {
  if (data.to_port != 0) return false;
  if (std::any_of(std::begin(data.reserved), std::end(data.reserved),
                  [](unsigned char b) { return b != 0; })) {
    return false;
  }
  const bool kernels =
      from.type == CU_GRAPH_NODE_TYPE_KERNEL && to.type == CU_GRAPH_NODE_TYPE_KERNEL;
  if (data.type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC) {
    if (!kernels) return false;
  } else if (data.type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT) {
    return false;
  }
  return data.from_port == CU_GRAPH_KERNEL_NODE_PORT_DEFAULT ||
         (from.type == CU_GRAPH_NODE_TYPE_KERNEL &&
          data.from_port <= CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER);
}

// Edges written as the driver writes them: without arrays the count; with them up to *count
// edges written (their ends in `from` and `to`, either null for a node's query, their data in
// `data` if given), the rest of the
// arrays nulled and zeroed, *count the edges written. Without `data` every edge's data must be the
// default, or the query would lose it (CUDA_ERROR_LOSSY_QUERY).
CUresult write_edges(const std::vector<const sim::Edge*>& edges, CUgraphNode* from, CUgraphNode* to,
                     CUgraphEdgeData* data, size_t* count) {
  if (count == nullptr || (data != nullptr && from == nullptr && to == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (from == nullptr && to == nullptr) {
    *count = edges.size();
    return CUDA_SUCCESS;
  }
  if (data == nullptr && std::any_of(edges.begin(), edges.end(),
                                     [](const sim::Edge* e) { return !default_data(e->data); })) {
    return CUDA_ERROR_LOSSY_QUERY;
  }
  const size_t written = std::min(*count, edges.size());
  for (size_t i = 0; i < *count; ++i) {
    const sim::Edge* e = i < written ? edges[i] : nullptr;
    if (from != nullptr) from[i] = e != nullptr ? sim::handle_of(*e->from) : nullptr;
    if (to != nullptr) to[i] = e != nullptr ? sim::handle_of(*e->to) : nullptr;
    if (data != nullptr) data[i] = e != nullptr ? e->data : CUgraphEdgeData{};
  }
  *count = written;
  return CUDA_SUCCESS;
}

// A node's dependencies (edges into it) or dependents (edges out of it), as write_edges writes
// them, the nodes at the edges' far ends only.
CUresult node_edges(CUgraphNode hNode, bool dependencies, CUgraphNode* nodes, CUgraphEdgeData* data,
                    size_t* count) {
  return sim::guarded([&](sim::State& s) {
    const sim::Node* node = sim::find_node(s, hNode);
    if (node == nullptr || count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::vector<const sim::Edge*> edges;
    for (const sim::Edge& e : node->graph.edges) {
      if ((dependencies ? e.to : e.from) == node) edges.push_back(&e);
    }
    return dependencies ? write_edges(edges, nodes, nullptr, data, count)
                        : write_edges(edges, nullptr, nodes, data, count);
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode* from,
                                                     CUgraphNode* to, CUgraphEdgeData* edgeData,
                                                     size_t* numEdges) {
  return sim::guarded([&](sim::State& s) {
    const sim::Graph* graph = sim::find_graph(s, hGraph);
    if (graph == nullptr || (from == nullptr) != (to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
    std::vector<const sim::Edge*> edges;
    for (const sim::Edge& e : graph->edges) edges.push_back(&e);
    return write_edges(edges, from, to, edgeData, numEdges);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode,
                                                                CUgraphNode* dependencies,
                                                                CUgraphEdgeData* edgeData,
                                                                size_t* numDependencies) {
  return node_edges(hNode, true, dependencies, edgeData, numDependencies);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode,
                                                                  CUgraphNode* dependentNodes,
                                                                  CUgraphEdgeData* edgeData,
                                                                  size_t* numDependentNodes) {
  return node_edges(hNode, false, dependentNodes, edgeData, numDependentNodes);
}

namespace {

// An edge a call names: two live nodes of the graph, and its data (the default without edgeData).
struct NamedEdge {
  sim::Node* from;
  sim::Node* to;
  CUgraphEdgeData data;
};

// The edges a call names; CUDA_ERROR_INVALID_VALUE for a pair that is not two distinct live nodes
// of `graph`.
CUresult named_edges(sim::State& s, const sim::Graph& graph, const CUgraphNode* from,
                     const CUgraphNode* to, const CUgraphEdgeData* data, size_t count,
                     std::vector<NamedEdge>& out) {
  if (count != 0 && (from == nullptr || to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    sim::Node* a = sim::find_node(s, from[i]);
    sim::Node* b = sim::find_node(s, to[i]);
    if (a == nullptr || b == nullptr || a == b || &a->graph != &graph || &b->graph != &graph) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    out.push_back({a, b, data != nullptr ? data[i] : CUgraphEdgeData{}});
  }
  return CUDA_SUCCESS;
}

std::vector<sim::Edge>::iterator edge_between(sim::Graph& graph, const sim::Node* from,
                                              const sim::Node* to) {
  return std::find_if(graph.edges.begin(), graph.edges.end(),
                      [&](const sim::Edge& e) { return e.from == from && e.to == to; });
}

// Runs `change(graph, edges)` on the edges a call names (from[i] -> to[i], with edgeData[i] or the
// default), once the graph and every node are found; the call's result.
template <typename Change>
CUresult with_named_edges(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                          const CUgraphEdgeData* edgeData, size_t numDependencies, Change change) {
  return sim::guarded([&](sim::State& s) {
    sim::Graph* graph = sim::find_graph(s, hGraph);
    if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::vector<NamedEdge> edges;
    if (const CUresult r = named_edges(s, *graph, from, to, edgeData, numDependencies, edges);
        r != CUDA_SUCCESS) {
      return r;
    }
    return change(*graph, edges);
  });
}

}  // namespace

// All or none: an edge that exists (or is named twice), data the driver does not take, or an edge
// closing a cycle refuses the whole call.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from,
                                                            const CUgraphNode* to,
                                                            const CUgraphEdgeData* edgeData,
                                                            size_t numDependencies) {
  return with_named_edges(hGraph, from, to, edgeData, numDependencies,
                          [](sim::Graph& graph, const std::vector<NamedEdge>& edges) {
                            const size_t before = graph.edges.size();
                            for (const NamedEdge& e : edges) {
                              if (!valid_data(*e.from, *e.to, e.data) ||
                                  edge_between(graph, e.from, e.to) != graph.edges.end() ||
                                  sim::reaches(graph, *e.to, *e.from)) {
                                graph.edges.resize(before);
                                return CUDA_ERROR_INVALID_VALUE;
                              }
                              graph.edges.push_back({e.from, e.to, e.data});
                            }
                            return CUDA_SUCCESS;
                          });
}

// All or none: an edge that does not exist with the data named (the default without edgeData)
// refuses the whole call; so does a graph with memory nodes, whose edges the driver keeps.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph,
                                                               const CUgraphNode* from,
                                                               const CUgraphNode* to,
                                                               const CUgraphEdgeData* edgeData,
                                                               size_t numDependencies) {
  return with_named_edges(
      hGraph, from, to, edgeData, numDependencies,
      [](sim::Graph& graph, const std::vector<NamedEdge>& edges) {
        if (!edges.empty() && sim::has_memory_nodes(graph)) return CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < edges.size(); ++i) {
          const auto found = edge_between(graph, edges[i].from, edges[i].to);
          if (found == graph.edges.end() ||
              std::memcmp(&found->data, &edges[i].data, sizeof edges[i].data) != 0) {
            return CUDA_ERROR_INVALID_VALUE;
          }
          for (size_t j = 0; j < i; ++j) {
            if (edges[j].from == edges[i].from && edges[j].to == edges[i].to) {
              return CUDA_ERROR_INVALID_VALUE;  // named twice
            }
          }
        }
        for (const NamedEdge& e : edges) graph.edges.erase(edge_between(graph, e.from, e.to));
        return CUDA_SUCCESS;
      });
}

// The node and its edges go (a child node's graph with it); a graph with memory nodes keeps its
// nodes, as the driver's does.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphDestroyNode(CUgraphNode hNode) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = sim::find_node(s, hNode);
    if (node == nullptr || sim::has_memory_nodes(node->graph)) return CUDA_ERROR_INVALID_VALUE;
    sim::remove_node(node->graph, *node);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  return sim::guarded([&](sim::State& s) {
    const sim::Node* node = sim::find_node(s, hNode);
    if (node == nullptr || type == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *type = node->type;
    return CUDA_SUCCESS;
  });
}

// The clone's copy of a node of the graph it was cloned from, while both live.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphNodeFindInClone(CUgraphNode* phNode,
                                                         CUgraphNode hOriginalNode,
                                                         CUgraph hClonedGraph) {
  return sim::guarded([&](sim::State& s) {
    const sim::Graph* clone = sim::find_graph(s, hClonedGraph);
    const sim::Node* original = sim::find_node(s, hOriginalNode);
    if (phNode == nullptr || clone == nullptr || original == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    sim::Node* copy = sim::copy_of(*clone, *original);
    if (copy == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *phNode = sim::handle_of(*copy);
    return CUDA_SUCCESS;
  });
}

// Conditional graph nodes on the simulated device: the handles made for a graph
// (cuGraphConditionalHandleCreate) and cuGraphAddNode_v2's conditional kind, whose bodies are
// graphs of the node's own. At a launch a node runs its bodies by the handle's value as the driver
// does - an if its first body when the value is nonzero (else its second, when it has one), a
// switch the body the value names (none past the last), a while its body while the value is
// nonzero - except that no kernel runs here to change the value: a while runs its body once, the
// one iteration standing for the loop.
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

bool sized_for(CUgraphConditionalNodeType kind, unsigned size) {
  switch (kind) {
    case CU_GRAPH_COND_TYPE_IF:
      return size == 1 || size == 2;
    case CU_GRAPH_COND_TYPE_WHILE:
      return size == 1;
    case CU_GRAPH_COND_TYPE_SWITCH:
      return size >= 1;
    default:
      return false;
  }
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out, CUgraph hGraph, CUcontext,
                               unsigned int defaultLaunchValue, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if (pHandle_out == nullptr || sim::find_graph(s, hGraph) == nullptr ||
        (flags & ~unsigned{CU_GRAPH_COND_ASSIGN_DEFAULT}) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const CUgraphConditionalHandle handle = s.next_conditional_handle++;
    s.conditional_handles[handle] = {hGraph, defaultLaunchValue, flags};
    *pHandle_out = handle;
    return CUDA_SUCCESS;
  });
}

CUresult sim::add_conditional_node(State& s, CUgraphNode* out, CUgraph graph,
                                   const CUgraphNode* dependencies, size_t count,
                                   CUDA_CONDITIONAL_NODE_PARAMS& params) {
  Graph* owner = find_graph(s, graph);
  const auto handle = s.conditional_handles.find(params.handle);
  if (owner == nullptr || handle == s.conditional_handles.end() || handle->second.graph != graph ||
      !sized_for(params.type, params.size)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  ConditionalNode node{params.handle, params.type, {}, {}};
  for (unsigned i = 0; i < params.size; ++i) {
    node.bodies.push_back(std::make_unique<Graph>());
    node.handles.push_back(handle_of(*node.bodies.back()));
  }
  const CUresult r = add_node(s, *owner, dependencies, count, CU_GRAPH_NODE_TYPE_CONDITIONAL,
                              std::move(node), out);
  if (r != CUDA_SUCCESS) return r;
  params.phGraph_out = std::get<ConditionalNode>(find_node(s, *out)->params).handles.data();
  return CUDA_SUCCESS;
}

std::vector<const sim::Graph*> sim::conditional_bodies_to_run(State& s,
                                                              const ConditionalNode& node) {
  const auto handle = s.conditional_handles.find(node.handle);
  if (handle == s.conditional_handles.end()) return {};
  // The default when the handle assigns it at each launch; otherwise the value no kernel set.
  const unsigned value =
      (handle->second.flags & CU_GRAPH_COND_ASSIGN_DEFAULT) != 0 ? handle->second.value : 0;
  switch (node.kind) {
    case CU_GRAPH_COND_TYPE_IF:
      if (value != 0) return {node.bodies[0].get()};
      return node.bodies.size() == 2 ? std::vector<const Graph*>{node.bodies[1].get()}
                                     : std::vector<const Graph*>{};
    case CU_GRAPH_COND_TYPE_WHILE:
      return value != 0 ? std::vector<const Graph*>{node.bodies[0].get()}
                        : std::vector<const Graph*>{};
    default:  // a switch
      return value < node.bodies.size() ? std::vector<const Graph*>{node.bodies[value].get()}
                                        : std::vector<const Graph*>{};
  }
}

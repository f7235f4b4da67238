// Executable graphs changed after instantiation, on the simulated device: updated from a graph of
// the same shape (cuGraphExecUpdate), a node's parameters set (cuGraphExec*SetParams, *SetEvent),
// a node enabled or disabled. The executable holds its own copy of the graph it was instantiated
// from; a call names a node of that graph, and changes the executable's copy of it (graph_model.h's
// copy_of), never the node itself. Changes apply to later launches (every launch here is over
// when it returns).
#include <cstring>
#include <utility>
#include <vector>

#include "graph_node_params.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

// The executable's copy of a node of `type` of the graph it was instantiated from, else null.
sim::Node* executable_node(sim::State& s, CUgraphExec hGraphExec, CUgraphNode hNode,
                           CUgraphNodeType type) {
  const auto executable = s.executables.find(hGraphExec);
  const sim::Node* original = sim::node_of_type(s, hNode, type);
  if (executable == s.executables.end() || original == nullptr) return nullptr;
  return sim::copy_of(*executable->second->graph, *original);
}

// Each node's dependencies, as places in insertion order, in edge order.
std::vector<std::vector<size_t>> dependencies(const sim::Graph& graph) {
  std::vector<std::vector<size_t>> out(graph.nodes.size());
  for (const sim::Edge& e : graph.edges) {
    size_t from = 0, to = 0;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      if (graph.nodes[i].get() == e.from) from = i;
      if (graph.nodes[i].get() == e.to) to = i;
    }
    out[to].push_back(from);
  }
  return out;
}

// Whether `from` may update `target` (cuGraphExecUpdate's rules, as far as the simulated device
// has them): as many nodes, paired in insertion order, of the same types with the same
// dependencies; memcpy nodes copying between the same kinds of memory; memory nodes unchanged;
// child graphs updatable in turn. Says why not in `info`, naming `from`'s node.
bool updatable(const sim::Graph& target, const sim::Graph& from,
               CUgraphExecUpdateResultInfo& info) {
  const auto refuse = [&](CUgraphExecUpdateResult result, const sim::Node* node,
                          const sim::Node* dependency = nullptr) {
    info.result = result;
    info.errorNode = node != nullptr ? sim::handle_of(const_cast<sim::Node&>(*node)) : nullptr;
    info.errorFromNode =
        dependency != nullptr ? sim::handle_of(const_cast<sim::Node&>(*dependency)) : nullptr;
    return false;
  };
  if (target.nodes.size() != from.nodes.size()) {
    return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, nullptr);
  }
  const auto target_dependencies = dependencies(target);
  const auto from_dependencies = dependencies(from);
  for (size_t i = 0; i < from.nodes.size(); ++i) {
    const sim::Node& a = *target.nodes[i];
    const sim::Node& b = *from.nodes[i];
    if (a.type != b.type) return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, &b);
    const auto& want = target_dependencies[i];
    const auto& have = from_dependencies[i];
    if (want.size() != have.size()) {
      return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, &b);
    }
    for (size_t d = 0; d < have.size(); ++d) {
      if (want[d] != have[d]) {
        return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, &b, from.nodes[have[d]].get());
      }
    }
    if (const auto* copy = std::get_if<sim::MemcpyNode>(&b.params)) {
      const auto& before = std::get<sim::MemcpyNode>(a.params).copy;
      if (before.srcMemoryType != copy->copy.srcMemoryType ||
          before.dstMemoryType != copy->copy.dstMemoryType) {
        return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, &b);
      }
    } else if (const auto* alloc = std::get_if<sim::AllocNode>(&b.params)) {
      const auto& before = std::get<sim::AllocNode>(a.params).params;
      if (before.dptr != alloc->params.dptr || before.bytesize != alloc->params.bytesize) {
        return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, &b);
      }
    } else if (const auto* freed = std::get_if<sim::FreeNode>(&b.params)) {
      if (std::get<sim::FreeNode>(a.params).dptr != freed->dptr) {
        return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, &b);
      }
    } else if (const auto* child = std::get_if<sim::ChildNode>(&b.params)) {
      CUgraphExecUpdateResultInfo inner{};
      if (!updatable(*std::get<sim::ChildNode>(a.params).graph, *child->graph, inner)) {
        return refuse(inner.result, &b);
      }
    }
  }
  return true;
}

// Takes `from`'s nodes' parameters into `target`'s (updatable() said it may); each node of
// `target` stays where it is, enabled or not as it was.
void take_parameters(sim::Graph& target, const sim::Graph& from) {
  for (size_t i = 0; i < from.nodes.size(); ++i) {
    target.nodes[i]->params = sim::copy_params(from.nodes[i]->params);
  }
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                                       CUgraphExecUpdateResultInfo* resultInfo) {
  return sim::guarded([&](sim::State& s) {
    if (resultInfo == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto executable = s.executables.find(hGraphExec);
    const sim::Graph* graph = sim::find_graph(s, hGraph);
    if (executable == s.executables.end() || graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *resultInfo = CUgraphExecUpdateResultInfo{};
    if (!updatable(*executable->second->graph, *graph, *resultInfo)) {
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    take_parameters(*executable->second->graph, *graph);
    resultInfo->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = executable_node(s, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
    if (node == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return sim::kernel_node(s, *nodeParams, std::get<sim::KernelNode>(node->params));
  });
}

// The kinds of memory copied between cannot change, as the driver says.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec,
                                                                 CUgraphNode hNode,
                                                                 const CUDA_MEMCPY3D* copyParams,
                                                                 CUcontext ctx) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = executable_node(s, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (node == nullptr || copyParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto& copy = std::get<sim::MemcpyNode>(node->params);
    if (copy.copy.srcMemoryType != copyParams->srcMemoryType ||
        copy.copy.dstMemoryType != copyParams->dstMemoryType) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return sim::memcpy_node(s, *copyParams, ctx, copy);
  });
}

// A 2D memset's address and value may change, a 1D memset's width too, as the driver says.
GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                               const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = executable_node(s, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMSET);
    if (node == nullptr || memsetParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto& memset = std::get<sim::MemsetNode>(node->params);
    const CUDA_MEMSET_NODE_PARAMS& before = memset.memset;
    const bool two_d = before.height > 1 || memsetParams->height > 1;
    if (memsetParams->elementSize != before.elementSize ||
        (two_d && (memsetParams->width != before.width || memsetParams->height != before.height ||
                   memsetParams->pitch != before.pitch))) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return sim::memset_node(s, *memsetParams, ctx, memset);
  });
}

// The child graph must have the shape of the node's (as cuGraphExecUpdate checks it).
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec,
                                                                     CUgraphNode hNode,
                                                                     CUgraph childGraph) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = executable_node(s, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_GRAPH);
    const sim::Graph* child = sim::find_graph(s, childGraph);
    if (node == nullptr || child == nullptr) return CUDA_ERROR_INVALID_VALUE;
    sim::Graph& target = *std::get<sim::ChildNode>(node->params).graph;
    CUgraphExecUpdateResultInfo info{};
    if (!updatable(target, *child, info)) return CUDA_ERROR_INVALID_VALUE;
    take_parameters(target, *child);
    return CUDA_SUCCESS;
  });
}

namespace {

CUresult set_event(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeType type, CUevent event) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = executable_node(s, hGraphExec, hNode, type);
    if (node == nullptr || !sim::known_event(s, event)) return CUDA_ERROR_INVALID_VALUE;
    std::get<sim::EventNode>(node->params).event = event;
    return CUDA_SUCCESS;
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecHostNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = executable_node(s, hGraphExec, hNode, CU_GRAPH_NODE_TYPE_HOST);
    if (node == nullptr || nodeParams == nullptr || nodeParams->fn == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    node->params = sim::HostNode{nodeParams->fn, nodeParams->userData};
    return CUDA_SUCCESS;
  });
}

namespace {

// The executable's copy of a kernel, memset or memcpy node (the kinds the driver enables and
// disables), else null.
sim::Node* switchable_node(sim::State& s, CUgraphExec hGraphExec, CUgraphNode hNode) {
  const sim::Node* original = sim::find_node(s, hNode);
  if (original == nullptr) return nullptr;
  switch (original->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
    case CU_GRAPH_NODE_TYPE_MEMSET:
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      return executable_node(s, hGraphExec, hNode, original->type);
    default:
      return nullptr;
  }
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec,
                                                                     CUgraphNode hNode,
                                                                     CUevent event) {
  return set_event(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec,
                                                                   CUgraphNode hNode,
                                                                   CUevent event) {
  return set_event(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

// A disabled node does nothing when the executable is launched, until it is enabled again.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                        unsigned int isEnabled) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = switchable_node(s, hGraphExec, hNode);
    if (node == nullptr) return CUDA_ERROR_INVALID_VALUE;
    node->enabled = isEnabled != 0;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                        unsigned int* isEnabled) {
  return sim::guarded([&](sim::State& s) {
    const sim::Node* node = switchable_node(s, hGraphExec, hNode);
    if (node == nullptr || isEnabled == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *isEnabled = node->enabled ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

// Graph nodes added one by one (the driver's cuGraphAdd*Node) and their parameters read and set,
// on the simulated device: kernel, memcpy, memset, empty, child graph, event record and event
// wait nodes (memory nodes: graph_memory_nodes.cpp). Each add takes dependencies on nodes of the
// same graph (graph_model.h's add_node); parameters are checked as the driver checks them
// (graph_node_params.h) and kept by value: a kernel node keeps its packed parameter bytes, a child
// graph node its own clone of the graph. A call on a node of another type than its own is
// CUDA_ERROR_INVALID_VALUE.
#include <cstring>
#include <utility>

#include "graph_node_params.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

// Adds a node of `type` made by `make(params&)` (a CUresult) to the graph, if it is one.
template <typename Params, typename Make>
CUresult add(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
             size_t numDependencies, CUgraphNodeType type, Make make) {
  return sim::guarded([&](sim::State& s) {
    sim::Graph* graph = sim::find_graph(s, hGraph);
    if (graph == nullptr || phGraphNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Params params{};
    if (const CUresult r = make(s, params); r != CUDA_SUCCESS) return r;
    return sim::add_node(s, *graph, dependencies, numDependencies, type, std::move(params),
                         phGraphNode);
  });
}

// Runs `body(params&)` on the parameters of a node of `type`, if it is one.
template <typename Params, typename Body>
CUresult with_node(CUgraphNode hNode, CUgraphNodeType type, Body body) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = sim::node_of_type(s, hNode, type);
    if (node == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return body(s, std::get<Params>(node->params));
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                        size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return add<sim::KernelNode>(phGraphNode, hGraph, dependencies, numDependencies,
                              CU_GRAPH_NODE_TYPE_KERNEL, [&](sim::State& s, sim::KernelNode& node) {
                                if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                return sim::kernel_node(s, *nodeParams, node);
                              });
}

// kernelParams points at one pointer per parameter, each into the node's own copy of the bytes;
// they stay valid until the node's parameters change. extra is null.
GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return with_node<sim::KernelNode>(
      hNode, CU_GRAPH_NODE_TYPE_KERNEL, [&](sim::State&, sim::KernelNode& node) {
        if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
        const sim::KernelLaunch& launch = node.launch;
        node.param_pointers.clear();
        for (const auto& param : launch.layout.params) {
          node.param_pointers.push_back(node.launch.params.data() + param.offset);
        }
        *nodeParams = CUDA_KERNEL_NODE_PARAMS{};
        nodeParams->func = node.func;
        nodeParams->gridDimX = launch.grid[0];
        nodeParams->gridDimY = launch.grid[1];
        nodeParams->gridDimZ = launch.grid[2];
        nodeParams->blockDimX = launch.block[0];
        nodeParams->blockDimY = launch.block[1];
        nodeParams->blockDimZ = launch.block[2];
        nodeParams->sharedMemBytes = launch.shared;
        nodeParams->kernelParams =
            node.param_pointers.empty() ? nullptr : node.param_pointers.data();
        nodeParams->extra = nullptr;
        nodeParams->kern = node.kern;
        nodeParams->ctx = node.ctx;
        return CUDA_SUCCESS;
      });
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return with_node<sim::KernelNode>(
      hNode, CU_GRAPH_NODE_TYPE_KERNEL, [&](sim::State& s, sim::KernelNode& node) {
        if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
        return sim::kernel_node(s, *nodeParams, node);  // its attributes stay
      });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                       const CUgraphNode* dependencies,
                                                       size_t numDependencies,
                                                       const CUDA_MEMCPY3D* copyParams,
                                                       CUcontext ctx) {
  return add<sim::MemcpyNode>(phGraphNode, hGraph, dependencies, numDependencies,
                              CU_GRAPH_NODE_TYPE_MEMCPY, [&](sim::State& s, sim::MemcpyNode& node) {
                                if (copyParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                return sim::memcpy_node(s, *copyParams, ctx, node);
                              });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode,
                                                             CUDA_MEMCPY3D* nodeParams) {
  return with_node<sim::MemcpyNode>(hNode, CU_GRAPH_NODE_TYPE_MEMCPY,
                                    [&](sim::State&, sim::MemcpyNode& node) {
                                      if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                      *nodeParams = node.copy;
                                      return CUDA_SUCCESS;
                                    });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode,
                                                             const CUDA_MEMCPY3D* nodeParams) {
  return with_node<sim::MemcpyNode>(hNode, CU_GRAPH_NODE_TYPE_MEMCPY,
                                    [&](sim::State& s, sim::MemcpyNode& node) {
                                      if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                      return sim::memcpy_node(s, *nodeParams, node.ctx, node);
                                    });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                       const CUgraphNode* dependencies,
                                                       size_t numDependencies,
                                                       const CUDA_MEMSET_NODE_PARAMS* memsetParams,
                                                       CUcontext ctx) {
  return add<sim::MemsetNode>(phGraphNode, hGraph, dependencies, numDependencies,
                              CU_GRAPH_NODE_TYPE_MEMSET, [&](sim::State& s, sim::MemsetNode& node) {
                                if (memsetParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                return sim::memset_node(s, *memsetParams, ctx, node);
                              });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode,
                                                             CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return with_node<sim::MemsetNode>(hNode, CU_GRAPH_NODE_TYPE_MEMSET,
                                    [&](sim::State&, sim::MemsetNode& node) {
                                      if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                      *nodeParams = node.memset;
                                      return CUDA_SUCCESS;
                                    });
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return with_node<sim::MemsetNode>(hNode, CU_GRAPH_NODE_TYPE_MEMSET,
                                    [&](sim::State& s, sim::MemsetNode& node) {
                                      if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                      return sim::memset_node(s, *nodeParams, node.ctx, node);
                                    });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                      const CUgraphNode* dependencies,
                                                      size_t numDependencies) {
  return add<sim::EmptyNode>(phGraphNode, hGraph, dependencies, numDependencies,
                             CU_GRAPH_NODE_TYPE_EMPTY,
                             [](sim::State&, sim::EmptyNode&) { return CUDA_SUCCESS; });
}

// The node owns a clone of the child graph; a graph with memory nodes cannot be embedded (its
// allocations have one owner).
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                           const CUgraphNode* dependencies,
                                                           size_t numDependencies,
                                                           CUgraph childGraph) {
  return add<sim::ChildNode>(phGraphNode, hGraph, dependencies, numDependencies,
                             CU_GRAPH_NODE_TYPE_GRAPH, [&](sim::State& s, sim::ChildNode& node) {
                               const sim::Graph* child = sim::find_graph(s, childGraph);
                               if (child == nullptr || sim::has_memory_nodes(*child)) {
                                 return CUDA_ERROR_INVALID_VALUE;
                               }
                               node.graph = sim::clone_graph(*child);
                               return CUDA_SUCCESS;
                             });
}

// The node's own graph, not a clone: what is done to it is done to the node's.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode,
                                                                CUgraph* phGraph) {
  return with_node<sim::ChildNode>(hNode, CU_GRAPH_NODE_TYPE_GRAPH,
                                   [&](sim::State&, sim::ChildNode& node) {
                                     if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                     *phGraph = sim::handle_of(*node.graph);
                                     return CUDA_SUCCESS;
                                   });
}

namespace {

CUresult add_event_node(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                        size_t numDependencies, CUgraphNodeType type, CUevent event) {
  return add<sim::EventNode>(phGraphNode, hGraph, dependencies, numDependencies, type,
                             [&](sim::State& s, sim::EventNode& node) {
                               if (!sim::known_event(s, event)) return CUDA_ERROR_INVALID_VALUE;
                               node.event = event;
                               return CUDA_SUCCESS;
                             });
}

CUresult get_event(CUgraphNode hNode, CUgraphNodeType type, CUevent* event_out) {
  return with_node<sim::EventNode>(hNode, type, [&](sim::State&, sim::EventNode& node) {
    if (event_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *event_out = node.event;
    return CUDA_SUCCESS;
  });
}

CUresult set_event(CUgraphNode hNode, CUgraphNodeType type, CUevent event) {
  return with_node<sim::EventNode>(hNode, type, [&](sim::State& s, sim::EventNode& node) {
    if (!sim::known_event(s, event)) return CUDA_ERROR_INVALID_VALUE;
    node.event = event;
    return CUDA_SUCCESS;
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode* phGraphNode,
                                                            CUgraph hGraph,
                                                            const CUgraphNode* dependencies,
                                                            size_t numDependencies, CUevent event) {
  return add_event_node(phGraphNode, hGraph, dependencies, numDependencies,
                        CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode,
                                                                 CUevent* event_out) {
  return get_event(hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event_out);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event) {
  return set_event(hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                          const CUgraphNode* dependencies,
                                                          size_t numDependencies, CUevent event) {
  return add_event_node(phGraphNode, hGraph, dependencies, numDependencies,
                        CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode,
                                                               CUevent* event_out) {
  return get_event(hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event_out);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event) {
  return set_event(hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

// Batch memory operation nodes: the operations kept by value, checked as the driver checks a
// batch's shape (an array for a non-empty batch, known operations, no flags); their words are
// judged at each launch, as a stream's batch judges them when it runs.
namespace {

CUresult mem_ops_node(const CUDA_BATCH_MEM_OP_NODE_PARAMS* p, sim::MemOpsNode& node) {
  if (p == nullptr || p->flags != 0 || (p->count > 0 && p->paramArray == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  node.ctx = p->ctx;
  node.flags = p->flags;
  node.operations.assign(p->paramArray, p->paramArray + p->count);
  for (const CUstreamBatchMemOpParams& operation : node.operations) {
    uint32_t kind = 0;
    std::memcpy(&kind, &operation, sizeof kind);
    if (kind == 0 || kind > CU_STREAM_MEM_OP_BARRIER) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphAddBatchMemOpNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                         size_t numDependencies, const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return add<sim::MemOpsNode>(
      phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP,
      [&](sim::State&, sim::MemOpsNode& node) { return mem_ops_node(nodeParams, node); });
}

// paramArray points at the node's own operations, valid until its parameters change.
GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode, CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams_out) {
  return with_node<sim::MemOpsNode>(
      hNode, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, [&](sim::State&, sim::MemOpsNode& node) {
        if (nodeParams_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
        nodeParams_out->ctx = node.ctx;
        nodeParams_out->flags = node.flags;
        nodeParams_out->count = static_cast<unsigned>(node.operations.size());
        nodeParams_out->paramArray = node.operations.empty() ? nullptr : node.operations.data();
        return CUDA_SUCCESS;
      });
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphBatchMemOpNodeSetParams(CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return with_node<sim::MemOpsNode>(hNode, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP,
                                    [&](sim::State&, sim::MemOpsNode& node) {
                                      sim::MemOpsNode changed;
                                      const CUresult r = mem_ops_node(nodeParams, changed);
                                      if (r == CUDA_SUCCESS) node = std::move(changed);
                                      return r;
                                    });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecBatchMemOpNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return sim::guarded([&](sim::State& s) {
    const auto executable = s.executables.find(hGraphExec);
    const sim::Node* original = sim::find_node(s, hNode);
    if (executable == s.executables.end() || original == nullptr) return CUDA_ERROR_INVALID_VALUE;
    sim::Node* copy = sim::copy_of(*executable->second->graph, *original);
    if (copy == nullptr || copy->type != CU_GRAPH_NODE_TYPE_BATCH_MEM_OP) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    sim::MemOpsNode changed;
    const CUresult r = mem_ops_node(nodeParams, changed);
    if (r == CUDA_SUCCESS) std::get<sim::MemOpsNode>(copy->params) = std::move(changed);
    return r;
  });
}

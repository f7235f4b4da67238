// A graph's shape in the client libcuda.so.1 (rows 239-251 and 129 of cuda_calls.txt; wire:
// common/graph_node_wire.h): node types, dependencies and edges, enabled nodes, a node's place in
// a clone, kernel nodes' attributes, destroying nodes and graphs. Over them and graph_nodes.h, the
// stub's own forms: the generic cuGraphAddNode, cuGraphNodeSetParams and cuGraphExecNodeSetParams
// (each kind's own call; edge data, which only cuGraphAddDependencies_v2 carries, are added after
// the node), and the legacy ABIs older programs and runtimes resolve (CUDA 10's kernel node
// parameters, edges without data, cuGraphInstantiate with its log, cuGraphExecUpdate's first
// form).
//
// The generic calls take the kinds gvirtus remotes: kernel, copy, memset, empty, child graph
// (cloned, or moved into its node: then the node's), event record and wait, memory allocation and
// free. Host, external semaphore, batch memory operation and conditional nodes are not
// supported.
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/call_marshal.h"
#include "common/error.h"
#include "cuda_enums.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/graph_node_wire.h"
#include "plugins/cuda/frontend/graph_nodes.h"
#include "plugins/cuda/frontend/host_staging.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

void put_nodes(WireWriter& w, const CUgraphNode* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) marshal::put_value(w, nodes[i]);
}

// Reads n nodes into `out` (when given), nulling the rest of its `capacity`.
void get_nodes(WireReader& r, size_t n, CUgraphNode* out, uint64_t capacity) {
  for (size_t i = 0; i < n; ++i) {
    const auto node = marshal::get_value<CUgraphNode>(r);
    if (out != nullptr) out[i] = node;
  }
  for (uint64_t i = n; out != nullptr && i < capacity; ++i) out[i] = nullptr;
}

void get_edges(WireReader& r, size_t n, CUgraphEdgeData* out, uint64_t capacity) {
  const bool given = r.get_bool();
  if (out == nullptr) {
    if (given && n > 0) (void)r.get_raw(n * sizeof(CUgraphEdgeData));
    return;
  }
  if (given && n > 0)
    std::memcpy(out, r.get_raw(n * sizeof(CUgraphEdgeData)).data(), n * sizeof(CUgraphEdgeData));
  for (uint64_t i = given ? n : 0; i < capacity; ++i) out[i] = CUgraphEdgeData{};
}

uint8_t wanted(const void* nodes, const void* edges, const size_t* count) {
  return static_cast<uint8_t>((nodes != nullptr ? kShapeNodes : 0) |
                              (edges != nullptr ? kShapeEdges : 0) |
                              (count != nullptr ? kShapeCount : 0));
}

// cuGraphNodeGetDependencies_v2, cuGraphNodeGetDependentNodes_v2, as the driver: without an array
// the count; with one, up to *count nodes (and edge data when asked), the rest nulled.
CUresult neighbours(Fn fn, CUgraphNode node, CUgraphNode* nodes, CUgraphEdgeData* edges,
                    size_t* count) {
  const uint64_t capacity = nodes != nullptr && count != nullptr ? *count : 0;
  uint64_t got = 0;
  const CUresult result = remote_sync(
      fn,
      [&](WireWriter& w) {
        marshal::put_value(w, node);
        w.put<uint8_t>(wanted(nodes, edges, count));
        w.put<uint64_t>(capacity);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        got = r.get<uint64_t>();
        const uint32_t n = r.get<uint32_t>();
        if (n > capacity) raise(ErrorKind::kInvalidInput, "more graph nodes than asked for");
        get_nodes(r, n, nodes, capacity);
        get_edges(r, n, edges, nodes != nullptr ? capacity : 0);
      });
  if (result == CUDA_SUCCESS && count != nullptr) *count = got;
  return result;
}

// cuGraphGetEdges_v2, as the driver: without arrays the count; with them, up to *count edges.
CUresult edges_of(CUgraph graph, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* edges,
                  size_t* count) {
  if ((from == nullptr) != (to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t capacity = from != nullptr && count != nullptr ? *count : 0;
  const stub::RouteScope route(pool_backend_of_handle("graph", graph));
  uint64_t got = 0;
  const CUresult result = remote_sync(
      Fn::cuGraphGetEdges_v2,
      [&](WireWriter& w) {
        marshal::put_value(w, graph);
        w.put<uint8_t>(wanted(from, edges, count));
        w.put<uint64_t>(capacity);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;
        got = r.get<uint64_t>();
        const uint32_t n = r.get<uint32_t>();
        if (n > capacity) raise(ErrorKind::kInvalidInput, "more graph edges than asked for");
        get_nodes(r, n, from, capacity);
        get_nodes(r, n, to, capacity);
        get_edges(r, n, edges, from != nullptr ? capacity : 0);
      });
  if (result == CUDA_SUCCESS && count != nullptr) *count = got;
  return result;
}

CUresult change_dependencies(Fn fn, CUgraph graph, const CUgraphNode* from, const CUgraphNode* to,
                             const CUgraphEdgeData* edges, size_t n) {
  if (n > 0 && (from == nullptr || to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  if (n > kMaxNodeEdges) return CUDA_ERROR_INVALID_VALUE;
  const stub::RouteScope route(pool_backend_of_handle("graph", graph));
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        marshal::put_value(w, graph);
        w.put<uint32_t>(static_cast<uint32_t>(n));
        put_nodes(w, from, n);
        put_nodes(w, to, n);
        w.put_bool(edges != nullptr);
        if (edges != nullptr && n > 0) w.put_raw(edges, n * sizeof(CUgraphEdgeData));
      },
      [](WireReader&) {});
}

// A kernel node's parameters in the form of CUDA 12 from CUDA 10's (no kernel, no context).
CUDA_KERNEL_NODE_PARAMS from_v1(const CUDA_KERNEL_NODE_PARAMS_v1& p) {
  CUDA_KERNEL_NODE_PARAMS v2{};
  v2.func = p.func, v2.gridDimX = p.gridDimX, v2.gridDimY = p.gridDimY, v2.gridDimZ = p.gridDimZ;
  v2.blockDimX = p.blockDimX, v2.blockDimY = p.blockDimY, v2.blockDimZ = p.blockDimZ;
  v2.sharedMemBytes = p.sharedMemBytes, v2.kernelParams = p.kernelParams, v2.extra = p.extra;
  return v2;
}

CUDA_KERNEL_NODE_PARAMS from_v3(const CUDA_KERNEL_NODE_PARAMS_v3& p) {
  CUDA_KERNEL_NODE_PARAMS v2{};
  static_assert(sizeof v2 == sizeof p, "the two forms are the same fields");
  std::memcpy(&v2, &p, sizeof v2);
  return v2;
}

CUDA_MEMSET_NODE_PARAMS memset_of(const CUDA_MEMSET_NODE_PARAMS_v2& p) {
  return CUDA_MEMSET_NODE_PARAMS{p.dst, p.pitch, p.value, p.elementSize, p.width, p.height};
}

// The node type of generic parameters, as bits (an application's enum field, never loaded as one).
int32_t type_of(const CUgraphNodeParams& p) {
  return marshal::enum_bits(p.type);
}

// cuGraphAddNode_v2: the kind's own add, then the edges' data as dependencies of their own.
CUresult add_generic(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                     const CUgraphEdgeData* edges, size_t n, CUgraphNodeParams* p) {
  if (p == nullptr || node == nullptr || (n > 0 && dependencies == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (p->reserved0[0] != 0 || p->reserved0[1] != 0 || p->reserved0[2] != 0 || p->reserved2 != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // With edge data, the node is added first and its edges after, each with its data.
  const bool edged = edges != nullptr && n > 0;
  const CUgraphNode* deps = edged ? nullptr : dependencies;
  const size_t count = edged ? 0 : n;
  CUresult result = CUDA_ERROR_NOT_SUPPORTED;
  switch (type_of(*p)) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const CUDA_KERNEL_NODE_PARAMS kernel = from_v3(p->kernel);
      result = add_kernel_node(node, graph, deps, count, &kernel);
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      result = add_memcpy_node(node, graph, deps, count, &p->memcpy.copyParams, p->memcpy.copyCtx);
      break;
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS memset = memset_of(p->memset);
      result = add_memset_node(node, graph, deps, count, &memset, p->memset.ctx);
      break;
    }
    case CU_GRAPH_NODE_TYPE_EMPTY:
      result = add_empty_node(node, graph, deps, count);
      break;
    case CU_GRAPH_NODE_TYPE_GRAPH:
      result = add_child_node(node, graph, deps, count, p->graph.graph,
                              static_cast<uint32_t>(marshal::enum_bits(p->graph.ownership)));
      break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      result = add_event_node(Fn::cuGraphAddEventRecordNode, node, graph, deps, count,
                              p->eventRecord.event);
      break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      result =
          add_event_node(Fn::cuGraphAddEventWaitNode, node, graph, deps, count, p->eventWait.event);
      break;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
      alloc.poolProps = p->alloc.poolProps, alloc.accessDescs = p->alloc.accessDescs;
      alloc.accessDescCount = p->alloc.accessDescCount, alloc.bytesize = p->alloc.bytesize;
      result = add_alloc_node(node, graph, deps, count, &alloc);
      if (result == CUDA_SUCCESS) p->alloc.dptr = alloc.dptr;
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      result = add_free_node(node, graph, deps, count, p->free.dptr);
      break;
    case CU_GRAPH_NODE_TYPE_HOST: {
      const CUDA_HOST_NODE_PARAMS host{p->host.fn, p->host.userData};
      result = add_host_node(node, graph, deps, count, &host);
      break;
    }
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
      result = add_conditional_node(node, graph, deps, count, p->conditional);
      break;
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
      const CUDA_BATCH_MEM_OP_NODE_PARAMS ops{p->memOp.ctx, p->memOp.count, p->memOp.paramArray,
                                              p->memOp.flags};
      result = add_mem_ops_node(node, graph, deps, count, &ops);
      break;
    }
    default:
      break;  // external semaphores: not remoted
  }
  if (result != CUDA_SUCCESS || !edged) return result;
  std::vector<CUgraphNode> to(n, *node);
  result =
      change_dependencies(Fn::cuGraphAddDependencies_v2, graph, dependencies, to.data(), edges, n);
  if (result != CUDA_SUCCESS) cuGraphDestroyNode(*node);  // as if never added
  return result;
}

// cuGraphNodeSetParams (executable null) and cuGraphExecNodeSetParams: the kind's own set.
CUresult set_generic(CUgraphExec executable, CUgraphNode node, const CUgraphNodeParams* p) {
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (type_of(*p)) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const CUDA_KERNEL_NODE_PARAMS kernel = from_v3(p->kernel);
      return set_kernel_node(executable, node, &kernel);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      return set_memcpy_node(executable, node, &p->memcpy.copyParams, p->memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS memset = memset_of(p->memset);
      return set_memset_node(executable, node, &memset, p->memset.ctx);
    }
    case CU_GRAPH_NODE_TYPE_GRAPH:
      if (executable == nullptr) return CUDA_ERROR_INVALID_VALUE;  // a graph's own: fixed
      return set_child_node(executable, node, p->graph.graph);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      return set_event_node(executable != nullptr ? Fn::cuGraphExecEventRecordNodeSetEvent
                                                  : Fn::cuGraphEventRecordNodeSetEvent,
                            executable, node, p->eventRecord.event);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      return set_event_node(executable != nullptr ? Fn::cuGraphExecEventWaitNodeSetEvent
                                                  : Fn::cuGraphEventWaitNodeSetEvent,
                            executable, node, p->eventWait.event);
    case CU_GRAPH_NODE_TYPE_HOST: {
      const CUDA_HOST_NODE_PARAMS host{p->host.fn, p->host.userData};
      return set_host_node(executable, node, &host);
    }
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
      const CUDA_BATCH_MEM_OP_NODE_PARAMS ops{p->memOp.ctx, p->memOp.count, p->memOp.paramArray,
                                              p->memOp.flags};
      return set_mem_ops_node(executable, node, &ops);
    }
    default:
      return CUDA_ERROR_NOT_SUPPORTED;
  }
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;
using cr::Fn;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  if (hNode == nullptr || type == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (cr::is_staged_copy_node(hNode)) {  // a child graph on the backend (host_staging.h)
    *type = CU_GRAPH_NODE_TYPE_MEMCPY;
    return CUDA_SUCCESS;
  }
  int32_t bits = 0;
  const CUresult result = cr::remote_sync(
      Fn::cuGraphNodeGetType,
      [&](gvirtus::WireWriter& w) { gvirtus::marshal::put_value(w, hNode); },
      [&](gvirtus::WireReader& r) {
        bits = r.get<int32_t>();
        if (!gvirtus::marshal::enum_holds<CUgraphNodeType>(bits)) {
          gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "a node type out of range");
        }
      });
  if (result == CUDA_SUCCESS) *type = static_cast<CUgraphNodeType>(bits);
  return result;
}

GVIRTUS_EXPORT CUresult cuGraphDestroyNode(CUgraphNode hNode) {
  if (hNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUresult result = cr::remote_sync(
      Fn::cuGraphDestroyNode,
      [&](gvirtus::WireWriter& w) { gvirtus::marshal::put_value(w, hNode); },
      [](gvirtus::WireReader&) {});
  if (result == CUDA_SUCCESS) cr::forget_node_copies(hNode);
  return result;
}

GVIRTUS_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) {
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_handle("graph", hGraph));
  const uint64_t clock = cr::allocation_clock();
  const CUresult result = cr::remote_sync(
      Fn::cuGraphDestroy, [&](gvirtus::WireWriter& w) { gvirtus::marshal::put_value(w, hGraph); },
      [](gvirtus::WireReader&) {});
  if (result == CUDA_SUCCESS) {
    cr::forget_graph_copies(hGraph, clock);
    cr::pool_forget_handle("graph", hGraph);
  }
  return result;
}

GVIRTUS_EXPORT CUresult cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  const CUresult result = cr::remote::cuGraphClone(phGraphClone, originalGraph);
  if (result == CUDA_SUCCESS) cr::staged_copies_cloned(originalGraph, *phGraphClone);
  return result;
}

GVIRTUS_EXPORT CUresult cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode,
                                               CUgraph hClonedGraph) {
  if (phNode == nullptr || hOriginalNode == nullptr || hClonedGraph == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_handle("graph", hClonedGraph));
  CUgraphNode found = nullptr;
  const CUresult result = cr::remote_sync(
      Fn::cuGraphNodeFindInClone,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hOriginalNode);
        gvirtus::marshal::put_value(w, hClonedGraph);
      },
      [&](gvirtus::WireReader& r) { found = gvirtus::marshal::get_value<CUgraphNode>(r); });
  if (result == CUDA_SUCCESS) *phNode = found;
  return result;
}

GVIRTUS_EXPORT CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
                                              unsigned int* isEnabled) {
  if (hGraphExec == nullptr || hNode == nullptr || isEnabled == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  uint32_t enabled = 0;
  const CUresult result = cr::remote_sync(
      Fn::cuGraphNodeGetEnabled,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hGraphExec);
        gvirtus::marshal::put_value(w, hNode);
      },
      [&](gvirtus::WireReader& r) { enabled = r.get<uint32_t>(); });
  if (result == CUDA_SUCCESS) *isEnabled = enabled;
  return result;
}

GVIRTUS_EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
                                              unsigned int isEnabled) {
  if (hGraphExec == nullptr || hNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::remote_sync(
      Fn::cuGraphNodeSetEnabled,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hGraphExec);
        gvirtus::marshal::put_value(w, hNode);
        w.put<uint32_t>(isEnabled);
      },
      [](gvirtus::WireReader&) {});
}

GVIRTUS_EXPORT CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                           CUgraphEdgeData* edgeData, size_t* numEdges) {
  return cr::edges_of(hGraph, from, to, edgeData, numEdges);
}

GVIRTUS_EXPORT CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode* dependencies,
                                                      CUgraphEdgeData* edgeData,
                                                      size_t* numDependencies) {
  return cr::neighbours(Fn::cuGraphNodeGetDependencies_v2, hNode, dependencies, edgeData,
                        numDependencies);
}

GVIRTUS_EXPORT CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode,
                                                        CUgraphNode* dependentNodes,
                                                        CUgraphEdgeData* edgeData,
                                                        size_t* numDependentNodes) {
  return cr::neighbours(Fn::cuGraphNodeGetDependentNodes_v2, hNode, dependentNodes, edgeData,
                        numDependentNodes);
}

GVIRTUS_EXPORT CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from,
                                                  const CUgraphNode* to,
                                                  const CUgraphEdgeData* edgeData,
                                                  size_t numDependencies) {
  return cr::change_dependencies(Fn::cuGraphAddDependencies_v2, hGraph, from, to, edgeData,
                                 numDependencies);
}

GVIRTUS_EXPORT CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode* from,
                                                     const CUgraphNode* to,
                                                     const CUgraphEdgeData* edgeData,
                                                     size_t numDependencies) {
  return cr::change_dependencies(Fn::cuGraphRemoveDependencies_v2, hGraph, from, to, edgeData,
                                 numDependencies);
}

GVIRTUS_EXPORT CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                                      CUkernelNodeAttrValue* value_out) {
  if (hNode == nullptr || value_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!gvirtus::marshal::enum_holds<CUlaunchAttributeID>(gvirtus::marshal::enum_bits(attr))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return cr::remote_sync(
      Fn::cuGraphKernelNodeGetAttribute,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hNode);
        gvirtus::marshal::put_value(w, attr);
      },
      [&](gvirtus::WireReader& r) {
        std::memcpy(value_out, r.get_raw(sizeof *value_out).data(), sizeof *value_out);
      });
}

GVIRTUS_EXPORT CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                                      const CUkernelNodeAttrValue* value) {
  if (hNode == nullptr || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!gvirtus::marshal::enum_holds<CUlaunchAttributeID>(gvirtus::marshal::enum_bits(attr))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return cr::remote_sync(
      Fn::cuGraphKernelNodeSetAttribute,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hNode);
        gvirtus::marshal::put_value(w, attr);
        w.put_raw(value, sizeof *value);
      },
      [](gvirtus::WireReader&) {});
}

GVIRTUS_EXPORT CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src) {
  if (dst == nullptr || src == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::remote_sync(
      Fn::cuGraphKernelNodeCopyAttributes,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, dst);
        gvirtus::marshal::put_value(w, src);
      },
      [](gvirtus::WireReader&) {});
}

GVIRTUS_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                          const CUgraphNode* dependencies,
                                          const CUgraphEdgeData* dependencyData,
                                          size_t numDependencies, CUgraphNodeParams* nodeParams) {
  return cr::add_generic(phGraphNode, hGraph, dependencies, dependencyData, numDependencies,
                         nodeParams);
}

GVIRTUS_EXPORT CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* nodeParams) {
  return cr::set_generic(nullptr, hNode, nodeParams);
}

GVIRTUS_EXPORT CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                 CUgraphNodeParams* nodeParams) {
  if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::set_generic(hGraphExec, hNode, nodeParams);
}

// The legacy ABIs: cuda.h names the current forms by these names, so they are undefined here.
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeGetParams
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
#undef cuGraphGetEdges
#undef cuGraphNodeGetDependencies
#undef cuGraphNodeGetDependentNodes
#undef cuGraphAddDependencies
#undef cuGraphRemoveDependencies
#undef cuGraphAddNode
#undef cuGraphInstantiate
#undef cuGraphExecUpdate

GVIRTUS_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                             const CUgraphNode* dependencies,
                                             size_t numDependencies,
                                             const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_KERNEL_NODE_PARAMS params = cr::from_v1(*nodeParams);
  return cr::add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies, &params);
}

GVIRTUS_EXPORT CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode,
                                                   CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS params{};
  const CUresult result = cr::get_kernel_node(hNode, &params);
  if (result != CUDA_SUCCESS) return result;
  *nodeParams = CUDA_KERNEL_NODE_PARAMS_v1{
      params.func,         params.gridDimX,  params.gridDimY,  params.gridDimZ,
      params.blockDimX,    params.blockDimY, params.blockDimZ, params.sharedMemBytes,
      params.kernelParams, params.extra};
  return result;
}

GVIRTUS_EXPORT CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode,
                                                   const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (hNode == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_KERNEL_NODE_PARAMS params = cr::from_v1(*nodeParams);
  return cr::set_kernel_node(nullptr, hNode, &params);
}

GVIRTUS_EXPORT CUresult cuGraphExecKernelNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (hGraphExec == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_KERNEL_NODE_PARAMS params = cr::from_v1(*nodeParams);
  return cr::set_kernel_node(hGraphExec, hNode, &params);
}

GVIRTUS_EXPORT CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                        size_t* numEdges) {
  return cr::edges_of(hGraph, from, to, nullptr, numEdges);
}

GVIRTUS_EXPORT CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies,
                                                   size_t* numDependencies) {
  return cr::neighbours(Fn::cuGraphNodeGetDependencies_v2, hNode, dependencies, nullptr,
                        numDependencies);
}

GVIRTUS_EXPORT CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes,
                                                     size_t* numDependentNodes) {
  return cr::neighbours(Fn::cuGraphNodeGetDependentNodes_v2, hNode, dependentNodes, nullptr,
                        numDependentNodes);
}

GVIRTUS_EXPORT CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from,
                                               const CUgraphNode* to, size_t numDependencies) {
  return cr::change_dependencies(Fn::cuGraphAddDependencies_v2, hGraph, from, to, nullptr,
                                 numDependencies);
}

GVIRTUS_EXPORT CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from,
                                                  const CUgraphNode* to, size_t numDependencies) {
  return cr::change_dependencies(Fn::cuGraphRemoveDependencies_v2, hGraph, from, to, nullptr,
                                 numDependencies);
}

GVIRTUS_EXPORT CUresult cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                       const CUgraphNode* dependencies, size_t numDependencies,
                                       CUgraphNodeParams* nodeParams) {
  return cr::add_generic(phGraphNode, hGraph, dependencies, nullptr, numDependencies, nodeParams);
}

// CUDA 10 and 11's instantiation: the node it failed at, and a log of why (the driver's text is
// not remoted: the log says what the result says).
static CUresult instantiate_with_log(CUgraphExec* phGraphExec, CUgraph hGraph,
                                     CUgraphNode* phErrorNode, char* logBuffer, size_t bufferSize) {
  CUDA_GRAPH_INSTANTIATE_PARAMS params{};
  const CUresult result = cuGraphInstantiateWithParams(phGraphExec, hGraph, &params);
  if (phErrorNode != nullptr) *phErrorNode = params.hErrNode_out;
  if (logBuffer != nullptr && bufferSize > 0) {
    const char* name = nullptr;
    if (result == CUDA_SUCCESS || cuGetErrorString(result, &name) != CUDA_SUCCESS) name = "";
    std::strncpy(logBuffer, name, bufferSize - 1);
    logBuffer[bufferSize - 1] = '\0';
  }
  return result;
}

GVIRTUS_EXPORT CUresult cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph,
                                           CUgraphNode* phErrorNode, char* logBuffer,
                                           size_t bufferSize) {
  return instantiate_with_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

GVIRTUS_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph,
                                              CUgraphNode* phErrorNode, char* logBuffer,
                                              size_t bufferSize) {
  return instantiate_with_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

// CUDA 10.2's update: the node at fault and the result, from the current form's info.
GVIRTUS_EXPORT CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                                          CUgraphNode* hErrorNode_out,
                                          CUgraphExecUpdateResult* updateResult_out) {
  if (hErrorNode_out == nullptr || updateResult_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResultInfo info{};
  const CUresult result = cuGraphExecUpdate_v2(hGraphExec, hGraph, &info);
  *hErrorNode_out = info.errorNode;
  std::memcpy(updateResult_out, &info.result, sizeof *updateResult_out);
  return result;
}

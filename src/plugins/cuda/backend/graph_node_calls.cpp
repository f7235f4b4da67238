// Adding graph nodes of each kind, and reading and setting their parameters (graph_node_calls.h).
#include <cuda.h>

#include <cstring>
#include <string>
#include <vector>

#include "backend/services/conditional_handles.h"
#include "backend/services/host_gates.h"
#include "backend/services/rejections.h"
#include "common/call_marshal.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/graph_node_calls.h"
#include "plugins/cuda/backend/graph_node_params.h"
#include "plugins/cuda/backend/graph_nodes.h"
#include "plugins/cuda/backend/host_functions.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/backend/stream_memory_ops.h"
#include "plugins/cuda/common/graph_node_wire.h"
#include "plugins/cuda/common/mem_op_records.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;

// The head of an "add" request: the graph and the dependencies, vetted.
struct AddHead {
  CUgraph graph;
  std::vector<CUgraphNode> dependencies;
  CUresult vetted;
};

AddHead get_add_head(WireReader& in) {
  AddHead head;
  head.graph = marshal::get_value<CUgraph>(in);
  const auto n = in.get<uint32_t>();
  // Bounded, and the bytes must be there before anything is allocated.
  if (n > kMaxNodeEdges || in.remaining() < uint64_t{n} * sizeof(uint64_t)) {
    raise(ErrorKind::kInvalidInput, "a node's list of " + std::to_string(n) + " dependencies");
  }
  head.dependencies.resize(n);
  for (auto& node : head.dependencies) node = marshal::get_value<CUgraphNode>(in);
  head.vetted = first_failure(CUDA_SUCCESS,
                              head.graph != nullptr ? vet(head.graph) : CUDA_ERROR_INVALID_VALUE,
                              vet_nodes(head.dependencies.data(), head.dependencies.size()));
  return head;
}

// An add: the head, then the kind's parameters, read and vetted by `read`; `add` calls the driver
// with the head. Reply: the result, the node.
template <typename Read, typename Add>
void add_node(WireReader& in, WireWriter& out, CUresult& result, CUresult available, Read read,
              Add add) {
  const AddHead head = get_add_head(in);
  const CUresult params_vetted = read(in);
  in.expect_end();
  result = first_failure(CUDA_SUCCESS, head.vetted, params_vetted, available);
  CUgraphNode node = nullptr;
  if (result == CUDA_SUCCESS) {
    result = add(&node, head.graph, head.dependencies.empty() ? nullptr : head.dependencies.data(),
                 head.dependencies.size());
  }
  out.put<int32_t>(result);
  marshal::put_value(out, result == CUDA_SUCCESS ? node : nullptr);
  if (result == CUDA_SUCCESS) adopt_node(node, head.graph);
}

// A set in a graph (`exec_form` false: u64 node first) or in an executable graph (u64 executable
// graph, u64 node), then the kind's parameters, read and vetted by `read`; `set` calls the
// driver. Reply: the result.
template <typename Read, typename Set>
void set_node(WireReader& in, WireWriter& out, CUresult& result, bool exec_form, CUresult available,
              Read read, Set set) {
  const auto executable = exec_form ? marshal::get_value<CUgraphExec>(in) : nullptr;
  const auto node = marshal::get_value<CUgraphNode>(in);
  const CUresult params_vetted = read(in);
  in.expect_end();
  result = first_failure(CUDA_SUCCESS, exec_form ? vet(executable) : CUDA_SUCCESS, vet_node(node),
                         params_vetted, available);
  if (result == CUDA_SUCCESS) result = set(executable, node);
  out.put<int32_t>(result);
}

// A get: u64 node; `get` calls the driver and, on success, writes what follows the result.
template <typename Get>
void get_node(WireReader& in, WireWriter& out, CUresult& result, CUresult available, Get get) {
  const auto node = marshal::get_value<CUgraphNode>(in);
  in.expect_end();
  result = first_failure(CUDA_SUCCESS, node != nullptr ? vet_node(node) : CUDA_ERROR_INVALID_VALUE,
                         available);
  const size_t at = out.size();
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) return;
  result = get(node, out);
  // A failure part way leaves only its result.
  if (result != CUDA_SUCCESS) out.truncate(at + sizeof(int32_t));
  out.store_at<int32_t>(at, result);
}

void kernel_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  KernelNodeArguments arguments;
  auto read = [&](WireReader& r) {
    CUresult vetted = CUDA_SUCCESS;
    get_kernel_params(r, arguments, vetted);
    return vetted;
  };
  switch (fn) {
    case Fn::cuGraphAddKernelNode_v2:
      return add_node(in, out, result, lacks(d.cuGraphAddKernelNode_v2), read,
                      [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
                        return d.cuGraphAddKernelNode_v2(node, graph, deps, n, &arguments.params);
                      });
    case Fn::cuGraphKernelNodeSetParams_v2:
    case Fn::cuGraphExecKernelNodeSetParams_v2: {
      const bool exec_form = fn == Fn::cuGraphExecKernelNodeSetParams_v2;
      return set_node(in, out, result, exec_form,
                      exec_form ? lacks(d.cuGraphExecKernelNodeSetParams_v2)
                                : lacks(d.cuGraphKernelNodeSetParams_v2),
                      read, [&](CUgraphExec executable, CUgraphNode node) {
                        return exec_form ? d.cuGraphExecKernelNodeSetParams_v2(executable, node,
                                                                               &arguments.params)
                                         : d.cuGraphKernelNodeSetParams_v2(node, &arguments.params);
                      });
    }
    default:  // cuGraphKernelNodeGetParams_v2: the record, the arguments, the node's graph
      return get_node(in, out, result, lacks(d.cuGraphKernelNodeGetParams_v2),
                      [&](CUgraphNode node, WireWriter& w) {
                        CUDA_KERNEL_NODE_PARAMS params{};
                        CUresult r = d.cuGraphKernelNodeGetParams_v2(node, &params);
                        PackedKernelNode packed;
                        if (r == CUDA_SUCCESS) r = pack_kernel_params(params, packed);
                        if (r != CUDA_SUCCESS) return r;
                        put_kernel_node(w, packed);
                        marshal::put_value(w, graph_of(node));
                        return r;
                      });
  }
}

void memset_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  CUDA_MEMSET_NODE_PARAMS params{};
  CUcontext context = nullptr;
  auto read = [&](WireReader& r) {
    CUresult vetted = CUDA_SUCCESS;
    params = get_memset_params(r, context, vetted);
    return vetted;
  };
  switch (fn) {
    case Fn::cuGraphAddMemsetNode:
      return add_node(in, out, result, lacks(d.cuGraphAddMemsetNode), read,
                      [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
                        return d.cuGraphAddMemsetNode(node, graph, deps, n, &params, context);
                      });
    case Fn::cuGraphMemsetNodeSetParams:
      return set_node(in, out, result, false, lacks(d.cuGraphMemsetNodeSetParams), read,
                      [&](CUgraphExec, CUgraphNode node) {
                        return d.cuGraphMemsetNodeSetParams(node, &params);
                      });
    case Fn::cuGraphExecMemsetNodeSetParams:
      return set_node(in, out, result, true, lacks(d.cuGraphExecMemsetNodeSetParams), read,
                      [&](CUgraphExec executable, CUgraphNode node) {
                        return d.cuGraphExecMemsetNodeSetParams(executable, node, &params, context);
                      });
    default:  // cuGraphMemsetNodeGetParams
      return get_node(in, out, result, lacks(d.cuGraphMemsetNodeGetParams),
                      [&](CUgraphNode node, WireWriter& w) {
                        CUDA_MEMSET_NODE_PARAMS got{};
                        const CUresult r = d.cuGraphMemsetNodeGetParams(node, &got);
                        if (r == CUDA_SUCCESS) put_memset_params(w, got);
                        return r;
                      });
  }
}

void memcpy_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  CUDA_MEMCPY3D copy{};
  CUcontext context = nullptr;
  auto read = [&](WireReader& r) {
    CUresult vetted = CUDA_SUCCESS;
    copy = get_memcpy_params(r, context, vetted);
    return vetted;
  };
  switch (fn) {
    case Fn::cuGraphAddMemcpyNode:
      return add_node(in, out, result, lacks(d.cuGraphAddMemcpyNode), read,
                      [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
                        return d.cuGraphAddMemcpyNode(node, graph, deps, n, &copy, context);
                      });
    case Fn::cuGraphMemcpyNodeSetParams:
      return set_node(
          in, out, result, false, lacks(d.cuGraphMemcpyNodeSetParams), read,
          [&](CUgraphExec, CUgraphNode node) { return d.cuGraphMemcpyNodeSetParams(node, &copy); });
    case Fn::cuGraphExecMemcpyNodeSetParams:
      return set_node(in, out, result, true, lacks(d.cuGraphExecMemcpyNodeSetParams), read,
                      [&](CUgraphExec executable, CUgraphNode node) {
                        return d.cuGraphExecMemcpyNodeSetParams(executable, node, &copy, context);
                      });
    default:  // cuGraphMemcpyNodeGetParams
      return get_node(in, out, result, lacks(d.cuGraphMemcpyNodeGetParams),
                      [&](CUgraphNode node, WireWriter& w) {
                        CUDA_MEMCPY3D got{};
                        const CUresult r = d.cuGraphMemcpyNodeGetParams(node, &got);
                        if (r == CUDA_SUCCESS) put_memcpy_params(w, got);
                        return r;
                      });
  }
}

// Event nodes: the event is the session's.
void event_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  CUevent event = nullptr;
  auto read = [&](WireReader& r) {
    event = marshal::get_value<CUevent>(r);
    return event != nullptr ? vet(event) : CUDA_ERROR_INVALID_VALUE;
  };
  using Add = CUresult (*)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, CUevent);
  using Set = CUresult (*)(CUgraphNode, CUevent);
  using ExecSet = CUresult (*)(CUgraphExec, CUgraphNode, CUevent);
  using Get = CUresult (*)(CUgraphNode, CUevent*);
  auto add = [&](Add function) {
    add_node(in, out, result, lacks(function), read,
             [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
               return function(node, graph, deps, n, event);
             });
  };
  auto set = [&](Set function) {
    set_node(in, out, result, false, lacks(function), read,
             [&](CUgraphExec, CUgraphNode node) { return function(node, event); });
  };
  auto exec_set = [&](ExecSet function) {
    set_node(in, out, result, true, lacks(function), read,
             [&](CUgraphExec executable, CUgraphNode node) {
               return function(executable, node, event);
             });
  };
  auto get = [&](Get function) {
    get_node(in, out, result, lacks(function), [&](CUgraphNode node, WireWriter& w) {
      CUevent got = nullptr;
      const CUresult r = function(node, &got);
      if (r == CUDA_SUCCESS) marshal::put_value(w, got);
      return r;
    });
  };
  switch (fn) {
    case Fn::cuGraphAddEventRecordNode:
      return add(d.cuGraphAddEventRecordNode);
    case Fn::cuGraphAddEventWaitNode:
      return add(d.cuGraphAddEventWaitNode);
    case Fn::cuGraphEventRecordNodeSetEvent:
      return set(d.cuGraphEventRecordNodeSetEvent);
    case Fn::cuGraphEventWaitNodeSetEvent:
      return set(d.cuGraphEventWaitNodeSetEvent);
    case Fn::cuGraphExecEventRecordNodeSetEvent:
      return exec_set(d.cuGraphExecEventRecordNodeSetEvent);
    case Fn::cuGraphExecEventWaitNodeSetEvent:
      return exec_set(d.cuGraphExecEventWaitNodeSetEvent);
    case Fn::cuGraphEventRecordNodeGetEvent:
      return get(d.cuGraphEventRecordNodeGetEvent);
    default:  // cuGraphEventWaitNodeGetEvent
      return get(d.cuGraphEventWaitNodeGetEvent);
  }
}

// Host nodes: the client's callback travels as its token; the driver's node holds a gate of the
// session's in its place (host_functions.h), kept as long as the session since the graph may run
// it any number of times. A get answers the token of the node's gate.
void host_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  uint64_t token = 0;
  auto read = [&](WireReader& r) {
    token = r.get<uint64_t>();
    return token != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
  // Runs `call` with the parameters of a new gate for `token`; a refused gate goes again.
  auto with_gate = [&](auto call) -> CUresult {
    services::Gate* gate = services::host_gates().make(token, false);
    if (gate == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;  // HostGates::kMaxGates live already
    const CUDA_HOST_NODE_PARAMS params{reach_host_gate, gate};
    const CUresult r = call(params);
    if (r != CUDA_SUCCESS) services::host_gates().discard(gate);
    return r;
  };
  switch (fn) {
    case Fn::cuGraphAddHostNode:
      return add_node(in, out, result, lacks(d.cuGraphAddHostNode), read,
                      [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
                        return with_gate([&](const CUDA_HOST_NODE_PARAMS& p) {
                          return d.cuGraphAddHostNode(node, graph, deps, n, &p);
                        });
                      });
    case Fn::cuGraphHostNodeSetParams:
      return set_node(in, out, result, false, lacks(d.cuGraphHostNodeSetParams), read,
                      [&](CUgraphExec, CUgraphNode node) {
                        return with_gate([&](const CUDA_HOST_NODE_PARAMS& p) {
                          return d.cuGraphHostNodeSetParams(node, &p);
                        });
                      });
    case Fn::cuGraphExecHostNodeSetParams:
      return set_node(in, out, result, true, lacks(d.cuGraphExecHostNodeSetParams), read,
                      [&](CUgraphExec executable, CUgraphNode node) {
                        return with_gate([&](const CUDA_HOST_NODE_PARAMS& p) {
                          return d.cuGraphExecHostNodeSetParams(executable, node, &p);
                        });
                      });
    default:  // cuGraphHostNodeGetParams
      return get_node(
          in, out, result, lacks(d.cuGraphHostNodeGetParams), [&](CUgraphNode node, WireWriter& w) {
            CUDA_HOST_NODE_PARAMS p{};
            const CUresult r = d.cuGraphHostNodeGetParams(node, &p);
            if (r != CUDA_SUCCESS) return r;
            // Every host node of the session holds one of its gates.
            const uint64_t gate_token =
                p.fn == reach_host_gate ? services::host_gates().token_of(p.userData) : 0;
            if (gate_token == 0) return CUDA_ERROR_NOT_SUPPORTED;
            w.put<uint64_t>(gate_token);
            return CUDA_SUCCESS;
          });
  }
}

// Empty and child graph nodes: a child graph is the session's; the graph a child node owns
// becomes one the session may use but not destroy.
void structural_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  CUgraph child = nullptr;
  uint32_t ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE;
  auto read_child = [&](WireReader& r) {
    child = marshal::get_value<CUgraph>(r);
    return child != nullptr ? vet(child) : CUDA_ERROR_INVALID_VALUE;
  };
  // A graph moved into its node is the node's from then on: it must be one the session may
  // destroy (not another node's), and it goes with its node.
  auto read_owned_child = [&](WireReader& r) {
    const CUresult vetted = read_child(r);
    ownership = r.get<uint32_t>();
    if (ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE &&
        ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (vetted == CUDA_SUCCESS && ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE &&
        is_child_graph(child)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return vetted;
  };
  switch (fn) {
    case Fn::cuGraphAddEmptyNode:
      return add_node(
          in, out, result, lacks(d.cuGraphAddEmptyNode), [](WireReader&) { return CUDA_SUCCESS; },
          [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
            return d.cuGraphAddEmptyNode(node, graph, deps, n);
          });
    case Fn::cuGraphAddChildGraphNode:
      return add_node(in, out, result, lacks(d.cuGraphAddChildGraphNode), read_owned_child,
                      [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
                        if (ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE) {
                          return d.cuGraphAddChildGraphNode(node, graph, deps, n, child);
                        }
                        if (d.cuGraphAddNode_v2 == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
                        CUgraphNodeParams params{};
                        params.type = CU_GRAPH_NODE_TYPE_GRAPH;
                        params.graph.graph = child;
                        params.graph.ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE;
                        const CUresult r =
                            d.cuGraphAddNode_v2(node, graph, deps, nullptr, n, &params);
                        if (r == CUDA_SUCCESS) adopt_child_graph(child, *node);
                        return r;
                      });
    case Fn::cuGraphExecChildGraphNodeSetParams:
      return set_node(in, out, result, true, lacks(d.cuGraphExecChildGraphNodeSetParams),
                      read_child, [&](CUgraphExec executable, CUgraphNode node) {
                        return d.cuGraphExecChildGraphNodeSetParams(executable, node, child);
                      });
    default:  // cuGraphChildGraphNodeGetGraph
      return get_node(in, out, result, lacks(d.cuGraphChildGraphNodeGetGraph),
                      [&](CUgraphNode node, WireWriter& w) {
                        CUgraph got = nullptr;
                        const CUresult r = d.cuGraphChildGraphNodeGetGraph(node, &got);
                        if (r != CUDA_SUCCESS) return r;
                        adopt_child_graph(got, node);
                        marshal::put_value(w, got);
                        return r;
                      });
  }
}

// Memory nodes: an allocation node's address is the session's device memory until its graph goes
// (graph_nodes.h); a free node names the session's device memory.
void memory_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  switch (fn) {
    case Fn::cuGraphAddMemAllocNode: {
      const AddHead head = get_add_head(in);
      std::vector<CUmemAccessDesc> access;
      CUresult vetted = CUDA_SUCCESS;
      CUDA_MEM_ALLOC_NODE_PARAMS params = get_alloc_params(in, access, vetted);
      in.expect_end();
      result = first_failure(CUDA_SUCCESS, head.vetted, vetted, lacks(d.cuGraphAddMemAllocNode));
      CUgraphNode node = nullptr;
      if (result == CUDA_SUCCESS) {
        result = d.cuGraphAddMemAllocNode(
            &node, head.graph, head.dependencies.empty() ? nullptr : head.dependencies.data(),
            head.dependencies.size(), &params);
      }
      out.put<int32_t>(result);
      marshal::put_value(out, result == CUDA_SUCCESS ? node : nullptr);
      out.put<uint64_t>(result == CUDA_SUCCESS ? params.dptr : 0);
      if (result == CUDA_SUCCESS) {
        adopt_node(node, head.graph);
        note_graph_allocation(head.graph, params.dptr, params.bytesize);
      }
      return;
    }
    case Fn::cuGraphMemAllocNodeGetParams:
      return get_node(in, out, result, lacks(d.cuGraphMemAllocNodeGetParams),
                      [&](CUgraphNode node, WireWriter& w) {
                        CUDA_MEM_ALLOC_NODE_PARAMS got{};
                        const CUresult r = d.cuGraphMemAllocNodeGetParams(node, &got);
                        if (r != CUDA_SUCCESS) return r;
                        put_alloc_params(w, got);
                        w.put<uint64_t>(got.dptr);
                        marshal::put_value(w, graph_of(node));
                        return r;
                      });
    case Fn::cuGraphAddMemFreeNode: {
      CUdeviceptr address = 0;
      return add_node(
          in, out, result, lacks(d.cuGraphAddMemFreeNode),
          [&](WireReader& r) {
            address = r.get<uint64_t>();
            return vet_device_pointer(address);
          },
          [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
            return d.cuGraphAddMemFreeNode(node, graph, deps, n, address);
          });
    }
    default:  // cuGraphMemFreeNodeGetParams
      return get_node(in, out, result, lacks(d.cuGraphMemFreeNodeGetParams),
                      [&](CUgraphNode node, WireWriter& w) {
                        CUdeviceptr got = 0;
                        const CUresult r = d.cuGraphMemFreeNodeGetParams(node, &got);
                        if (r == CUDA_SUCCESS) w.put<uint64_t>(got);
                        return r;
                      });
  }
}

// Batch memory operation nodes: their operations' words must be the session's device memory.
void batch_mem_op_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
  std::vector<CUstreamBatchMemOpParams> operations;
  auto read = [&](WireReader& r) {
    params.ctx = marshal::get_value<CUcontext>(r);
    params.flags = r.get<uint32_t>();
    params.count = r.get<uint32_t>();
    CUresult vetted = vet(params.ctx);
    operations = get_mem_ops(r, params.count, vetted, "a batch memory operation node");
    params.paramArray = operations.empty() ? nullptr : operations.data();
    return vetted;
  };
  switch (fn) {
    case Fn::cuGraphAddBatchMemOpNode:
      return add_node(in, out, result, lacks(d.cuGraphAddBatchMemOpNode), read,
                      [&](CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n) {
                        return d.cuGraphAddBatchMemOpNode(node, graph, deps, n, &params);
                      });
    case Fn::cuGraphBatchMemOpNodeSetParams:
      return set_node(in, out, result, false, lacks(d.cuGraphBatchMemOpNodeSetParams), read,
                      [&](CUgraphExec, CUgraphNode node) {
                        return d.cuGraphBatchMemOpNodeSetParams(node, &params);
                      });
    case Fn::cuGraphExecBatchMemOpNodeSetParams:
      return set_node(in, out, result, true, lacks(d.cuGraphExecBatchMemOpNodeSetParams), read,
                      [&](CUgraphExec executable, CUgraphNode node) {
                        return d.cuGraphExecBatchMemOpNodeSetParams(executable, node, &params);
                      });
    default:  // cuGraphBatchMemOpNodeGetParams
      return get_node(in, out, result, lacks(d.cuGraphBatchMemOpNodeGetParams),
                      [&](CUgraphNode node, WireWriter& w) {
                        CUDA_BATCH_MEM_OP_NODE_PARAMS got{};
                        const CUresult r = d.cuGraphBatchMemOpNodeGetParams(node, &got);
                        if (r != CUDA_SUCCESS) return r;
                        if (got.count > kMaxBatchMemOps) return CUDA_ERROR_NOT_SUPPORTED;
                        marshal::put_value(w, got.ctx);
                        w.put<uint32_t>(got.flags);
                        w.put<uint32_t>(got.count);
                        for (unsigned i = 0; i < got.count; ++i) {
                          MemOpRecord record{};
                          (void)mem_op_record(got.paramArray[i], true, record);
                          put_record(w, record);
                        }
                        marshal::put_value(w, graph_of(node));
                        return CUDA_SUCCESS;
                      });
  }
}

// Conditional handles the session made (never destroyed: a worker's exit may still run calls).
services::ConditionalHandles& conditional_handles() {
  static auto* const handles = new services::ConditionalHandles;
  return *handles;
}

// cuGraphConditionalHandleCreate and conditional nodes (the generic add's conditional kind).
void conditional_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  if (fn == Fn::cuGraphConditionalHandleCreate) {
    const auto graph = marshal::get_value<CUgraph>(in);
    const auto context = marshal::get_value<CUcontext>(in);
    const auto value = in.get<uint32_t>();
    const auto flags = in.get<uint32_t>();
    in.expect_end();
    result = first_failure(CUDA_SUCCESS, graph != nullptr ? vet(graph) : CUDA_ERROR_INVALID_VALUE,
                           vet(context), lacks(d.cuGraphConditionalHandleCreate));
    CUgraphConditionalHandle handle = 0;
    if (result == CUDA_SUCCESS) {
      result = d.cuGraphConditionalHandleCreate(&handle, graph, context, value, flags);
    }
    out.put<int32_t>(result);
    out.put<uint64_t>(result == CUDA_SUCCESS ? handle : 0);
    if (result == CUDA_SUCCESS) conditional_handles().made(handle, graph);
    return;
  }
  const AddHead head = get_add_head(in);
  const auto handle = in.get<uint64_t>();
  const auto type = in.get<uint32_t>();
  const auto size = in.get<uint32_t>();
  const auto context = marshal::get_value<CUcontext>(in);
  in.expect_end();
  const CUresult sized = size >= 1 && size <= kMaxConditionalBodies
                             ? CUDA_SUCCESS
                             : static_cast<CUresult>(services::refuse(
                                   CUDA_ERROR_INVALID_VALUE, "cuda", "conditional node size",
                                   reinterpret_cast<const void*>(uintptr_t{size}),
                                   "outside 1 to kMaxConditionalBodies"));
  result =
      first_failure(CUDA_SUCCESS, head.vetted, sized, vet(context),
                    head.vetted == CUDA_SUCCESS
                        ? static_cast<CUresult>(conditional_handles().vet(
                              handle, head.graph, CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, "cuda"))
                        : CUDA_SUCCESS,
                    lacks(d.cuGraphAddNode_v2));
  CUgraphNode node = nullptr;
  CUgraphNodeParams params{};
  if (result == CUDA_SUCCESS) {
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional.handle = handle;
    // The type as the driver's enum, from bits it judges (an unknown one is its refusal).
    std::memcpy(&params.conditional.type, &type, sizeof type);
    params.conditional.size = size;
    params.conditional.ctx = context;
    result = d.cuGraphAddNode_v2(&node, head.graph,
                                 head.dependencies.empty() ? nullptr : head.dependencies.data(),
                                 nullptr, head.dependencies.size(), &params);
  }
  const bool made = result == CUDA_SUCCESS && params.conditional.phGraph_out != nullptr;
  out.put<int32_t>(result);
  marshal::put_value(out, result == CUDA_SUCCESS ? node : nullptr);
  out.put<uint32_t>(made ? size : 0);
  if (result != CUDA_SUCCESS) return;
  adopt_node(node, head.graph);
  for (uint32_t i = 0; made && i < size; ++i) {
    const CUgraph body = params.conditional.phGraph_out[i];
    marshal::put_value(out, body);
    adopt_child_graph(body, node);  // the node's: the session fills it, never destroys it
  }
}

}  // namespace

void forget_conditional_handles(CUgraph graph) {
  if (graph == nullptr) {
    conditional_handles().clear();
  } else {
    conditional_handles().graph_gone(graph);
  }
}

bool run_graph_node_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuGraphAddKernelNode_v2:
    case Fn::cuGraphKernelNodeGetParams_v2:
    case Fn::cuGraphKernelNodeSetParams_v2:
    case Fn::cuGraphExecKernelNodeSetParams_v2:
      kernel_nodes(fn, in, out, result);
      return true;
    case Fn::cuGraphAddMemsetNode:
    case Fn::cuGraphMemsetNodeGetParams:
    case Fn::cuGraphMemsetNodeSetParams:
    case Fn::cuGraphExecMemsetNodeSetParams:
      memset_nodes(fn, in, out, result);
      return true;
    case Fn::cuGraphAddMemcpyNode:
    case Fn::cuGraphMemcpyNodeGetParams:
    case Fn::cuGraphMemcpyNodeSetParams:
    case Fn::cuGraphExecMemcpyNodeSetParams:
      memcpy_nodes(fn, in, out, result);
      return true;
    case Fn::cuGraphAddEventRecordNode:
    case Fn::cuGraphAddEventWaitNode:
    case Fn::cuGraphEventRecordNodeGetEvent:
    case Fn::cuGraphEventWaitNodeGetEvent:
    case Fn::cuGraphEventRecordNodeSetEvent:
    case Fn::cuGraphEventWaitNodeSetEvent:
    case Fn::cuGraphExecEventRecordNodeSetEvent:
    case Fn::cuGraphExecEventWaitNodeSetEvent:
      event_nodes(fn, in, out, result);
      return true;
    case Fn::cuGraphAddEmptyNode:
    case Fn::cuGraphAddChildGraphNode:
    case Fn::cuGraphChildGraphNodeGetGraph:
    case Fn::cuGraphExecChildGraphNodeSetParams:
      structural_nodes(fn, in, out, result);
      return true;
    case Fn::cuGraphAddHostNode:
    case Fn::cuGraphHostNodeGetParams:
    case Fn::cuGraphHostNodeSetParams:
    case Fn::cuGraphExecHostNodeSetParams:
      host_nodes(fn, in, out, result);
      return true;
    case Fn::cuGraphAddMemAllocNode:
    case Fn::cuGraphMemAllocNodeGetParams:
    case Fn::cuGraphAddMemFreeNode:
    case Fn::cuGraphMemFreeNodeGetParams:
      memory_nodes(fn, in, out, result);
      return true;
    case Fn::cuGraphConditionalHandleCreate:
    case Fn::gvirtusGraphAddConditionalNode:
      conditional_nodes(fn, in, out, result);
      return true;
    case Fn::cuGraphAddBatchMemOpNode:
    case Fn::cuGraphBatchMemOpNodeGetParams:
    case Fn::cuGraphBatchMemOpNodeSetParams:
    case Fn::cuGraphExecBatchMemOpNodeSetParams:
      batch_mem_op_nodes(fn, in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda

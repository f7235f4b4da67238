// The backend's handlers of the graph node rows (221-267 of cudart_calls.txt, and the graph's
// destruction, 210; wire: common/graph_node_wire.h), called by run_custom. Every graph, node,
// event and executable graph is vetted as the session's before it reaches the runtime (nodes:
// graph_nodes.h), and every device range a memset or copy node names is vetted as device memory
// over its whole extent: a node's pointers are dereferenced each time its graph runs.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/services/conditional_handles.h"
#include "common/call_marshal.h"
#include "common/wire_record.h"
#include "plugins/cudart/backend/capture_graphs.h"
#include "plugins/cudart/backend/graph_node_params.h"
#include "plugins/cudart/backend/graph_nodes.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/host_functions.h"
#include "plugins/cudart/backend/loaded_driver.h"
#include "plugins/cudart/backend/modules.h"
#include "plugins/cudart/backend/user_objects.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/graph_node_wire.h"
#include "plugins/cudart/common/module_wire.h"

namespace gvirtus::cudart {
namespace {

// A kernel node's parameters. The runtime names a node's kernel by the host function it was
// registered under, and answers cudaErrorInvalidDeviceFunction for the library kernels this
// backend launches (modules.cpp); the driver under it still gives the node's kernel handle, which
// names the session's kernel as kernel_parameters expects.
cudaError_t kernel_node_params(cudaGraphNode_t node, cudaKernelNodeParams& params) {
  cudaError_t result = ::cudaGraphKernelNodeGetParams(node, &params);
  if (result != cudaErrorInvalidDeviceFunction) return result;
  using GetParams = CUresult (*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2*);
  static const auto driver_params =
      loaded_driver_function<GetParams>("cuGraphKernelNodeGetParams_v2");
  CUDA_KERNEL_NODE_PARAMS_v2 driver{};
  if (driver_params == nullptr || driver_params(node, &driver) != CUDA_SUCCESS) return result;
  params.func =
      driver.kern != nullptr ? static_cast<void*>(driver.kern) : static_cast<void*>(driver.func);
  params.gridDim = dim3(driver.gridDimX, driver.gridDimY, driver.gridDimZ);
  params.blockDim = dim3(driver.blockDimX, driver.blockDimY, driver.blockDimZ);
  params.sharedMemBytes = driver.sharedMemBytes;
  params.kernelParams = driver.kernelParams;
  params.extra = driver.extra;
  return cudaSuccess;
}

cudaGraphNode_t get_node(WireReader& in) {
  return handle_from_wire<cudaGraphNode_t>(in.get<uint64_t>());
}

// u32 n, then n nodes; n bounded, and the bytes must be there before anything is allocated.
std::vector<cudaGraphNode_t> get_node_list(WireReader& in, uint32_t n) {
  if (n > kMaxNodeEdges || in.remaining() < uint64_t{n} * sizeof(uint64_t)) {
    raise(ErrorKind::kInvalidInput, "graph node list of " + std::to_string(n) + " nodes");
  }
  std::vector<cudaGraphNode_t> nodes(n);
  for (auto& node : nodes) node = get_node(in);
  return nodes;
}

std::vector<cudaGraphEdgeData> get_edge_data(WireReader& in, size_t n) {
  std::vector<cudaGraphEdgeData> edges(n);
  if (n > 0)
    std::memcpy(edges.data(), in.get_raw(n * sizeof(cudaGraphEdgeData)).data(),
                n * sizeof(cudaGraphEdgeData));
  return edges;
}

void put_node_list(WireWriter& out, const cudaGraphNode_t* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) out.put<uint64_t>(wire_handle(nodes[i]));
}

// The head of an "add" request: the graph and the dependencies.
struct AddHead {
  cudaGraph_t graph;
  std::vector<cudaGraphNode_t> dependencies;
};

AddHead get_add_head(WireReader& in) {
  AddHead head;
  head.graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  head.dependencies = get_node_list(in, in.get<uint32_t>());
  return head;
}

// Vets the head (and what the kind vetted: `vetted`), adds the node with `add(&node)`, adopts it
// and replies.
template <typename Add>
cudaError_t finish_add(WireWriter& out, const AddHead& head, cudaError_t vetted, Add&& add) {
  cudaError_t result = first_failure(
      vet(head.graph), vet_nodes(head.dependencies.data(), head.dependencies.size()), vetted);
  cudaGraphNode_t node = nullptr;
  if (result == cudaSuccess) result = add(&node);
  if (result == cudaSuccess) adopt_node(node, head.graph);
  out.put<int32_t>(result);
  if (result == cudaSuccess) out.put<uint64_t>(wire_handle(node));
  return result;
}

// cudaGraphNodeGetDependencies, cudaGraphNodeGetDependentNodes: no more than a reply carries.
cudaError_t run_node_neighbours(Fn fn, WireReader& in, WireWriter& out) {
  const cudaGraphNode_t node = get_node(in);
  const uint8_t wanted = in.get<uint8_t>();
  const uint64_t capacity = in.get<uint64_t>();
  in.expect_end();
  const size_t room = (wanted & kShapeNodes) != 0 ? std::min(capacity, kMaxNodeEdges) : 0;
  std::vector<cudaGraphNode_t> nodes(std::max<size_t>(room, 1));
  std::vector<cudaGraphEdgeData> edges(std::max<size_t>(room, 1));
  size_t count = room;
  cudaError_t result = vet_node(node);
  if (result == cudaSuccess) {
    auto* array = (wanted & kShapeNodes) != 0 ? nodes.data() : nullptr;
    auto* edge_array = (wanted & kShapeEdges) != 0 ? edges.data() : nullptr;
    size_t* counted = (wanted & kShapeCount) != 0 ? &count : nullptr;
    result = fn == Fn::cudaGraphNodeGetDependencies
                 ? ::cudaGraphNodeGetDependencies(node, array, edge_array, counted)
                 : ::cudaGraphNodeGetDependentNodes(node, array, edge_array, counted);
  }
  out.put<int32_t>(result);
  if (result != cudaSuccess) return result;
  const size_t n = std::min<size_t>(room, count);
  adopt_nodes(nodes.data(), n, graph_of(node));
  out.put<uint64_t>(count);
  out.put<uint32_t>(static_cast<uint32_t>(n));
  put_node_list(out, nodes.data(), n);
  const bool with_edges = (wanted & kShapeEdges) != 0 && (wanted & kShapeNodes) != 0;
  out.put<uint8_t>(with_edges);
  if (with_edges && n > 0) out.put_raw(edges.data(), n * sizeof(cudaGraphEdgeData));
  return result;
}

cudaError_t run_graph_edges(WireReader& in, WireWriter& out) {
  const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  const uint8_t wanted = in.get<uint8_t>();
  const uint64_t capacity = in.get<uint64_t>();
  in.expect_end();
  const size_t room = (wanted & kShapeNodes) != 0 ? std::min(capacity, kMaxNodeEdges) : 0;
  std::vector<cudaGraphNode_t> from(std::max<size_t>(room, 1));
  std::vector<cudaGraphNode_t> to(std::max<size_t>(room, 1));
  std::vector<cudaGraphEdgeData> edges(std::max<size_t>(room, 1));
  size_t count = room;
  cudaError_t result = vet(graph);
  if (result == cudaSuccess) {
    const bool arrays = (wanted & kShapeNodes) != 0;
    result =
        ::cudaGraphGetEdges(graph, arrays ? from.data() : nullptr, arrays ? to.data() : nullptr,
                            (wanted & kShapeEdges) != 0 ? edges.data() : nullptr,
                            (wanted & kShapeCount) != 0 ? &count : nullptr);
  }
  out.put<int32_t>(result);
  if (result != cudaSuccess) return result;
  const size_t n = std::min<size_t>(room, count);
  adopt_nodes(from.data(), n, graph);
  adopt_nodes(to.data(), n, graph);
  out.put<uint64_t>(count);
  out.put<uint32_t>(static_cast<uint32_t>(n));
  put_node_list(out, from.data(), n);
  put_node_list(out, to.data(), n);
  const bool with_edges = (wanted & kShapeEdges) != 0 && (wanted & kShapeNodes) != 0;
  out.put<uint8_t>(with_edges);
  if (with_edges && n > 0) out.put_raw(edges.data(), n * sizeof(cudaGraphEdgeData));
  return result;
}

cudaError_t run_dependencies(Fn fn, WireReader& in, WireWriter& out) {
  const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  const uint32_t n = in.get<uint32_t>();
  const auto from = get_node_list(in, n);
  const auto to = get_node_list(in, n);
  const bool with_edges = in.get_bool();
  const auto edges = get_edge_data(in, with_edges ? n : 0);
  in.expect_end();
  cudaError_t result =
      first_failure(vet(graph), vet_nodes(from.data(), n), vet_nodes(to.data(), n));
  if (result == cudaSuccess) {
    const cudaGraphEdgeData* edge_data = with_edges ? edges.data() : nullptr;
    result = fn == Fn::cudaGraphAddDependencies
                 ? ::cudaGraphAddDependencies(graph, from.data(), to.data(), edge_data, n)
                 : ::cudaGraphRemoveDependencies(graph, from.data(), to.data(), edge_data, n);
  }
  out.put<int32_t>(result);
  return result;
}

// cudaGraphAddMemAllocNode: the pool's properties travel as their bytes (the runtime checks
// them), except the Windows security attributes, a pointer, which is null here; the address the
// runtime placed becomes the graph's device memory.
cudaError_t run_add_mem_alloc(WireReader& in, WireWriter& out) {
  const AddHead head = get_add_head(in);
  cudaMemAllocNodeParams params{};
  std::vector<cudaMemAccessDesc> access;
  get_alloc_params(in, params, access);
  in.expect_end();
  const cudaError_t result = finish_add(out, head, cudaSuccess, [&](cudaGraphNode_t* node) {
    return ::cudaGraphAddMemAllocNode(node, head.graph, head.dependencies.data(),
                                      head.dependencies.size(), &params);
  });
  if (result == cudaSuccess) {
    note_graph_allocation(head.graph, params.dptr, params.bytesize);
    out.put<uint64_t>(reinterpret_cast<uint64_t>(params.dptr));
  }
  return result;
}

// The conditional handles the session made (never destroyed: a worker's exit may still run
// calls).
services::ConditionalHandles& conditional_handles() {
  static auto* const handles = new services::ConditionalHandles;
  return *handles;
}

// cudaGraphConditionalHandleCreate: recorded with its graph.
cudaError_t run_conditional_handle_create(WireReader& in, WireWriter& out) {
  const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  const auto value = in.get<uint32_t>();
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  cudaError_t result = graph != nullptr ? vet(graph) : cudaErrorInvalidValue;
  cudaGraphConditionalHandle handle = 0;
  if (result == cudaSuccess)
    result = ::cudaGraphConditionalHandleCreate(&handle, graph, value, flags);
  out.put<int32_t>(result);
  if (result != cudaSuccess) return result;
  out.put<uint64_t>(handle);
  conditional_handles().made(handle, graph);
  return result;
}

// cudaGraphAddNode: the head with edge data, the generic parameters. A child graph moved into
// the node becomes the node's; an allocation's address comes back, the graph's device memory; a
// conditional node's bodies come back, the node's graphs.
cudaError_t run_add_node(WireReader& in, WireWriter& out) {
  const AddHead head = get_add_head(in);
  const bool with_edges = in.get_bool();
  const auto edges = get_edge_data(in, with_edges ? head.dependencies.size() : 0);
  std::vector<cudaMemAccessDesc> access;
  cudaError_t vetted = cudaSuccess;
  cudaGraphNodeParams params = get_node_params(in, access, vetted);
  in.expect_end();
  if (params.type == cudaGraphNodeTypeConditional && vetted == cudaSuccess) {
    vetted = static_cast<cudaError_t>(conditional_handles().vet(
        params.conditional.handle, head.graph, cudaSuccess, cudaErrorInvalidValue, "cudart"));
  }
  cudaGraphNode_t added = nullptr;
  const cudaError_t result = finish_add(out, head, vetted, [&](cudaGraphNode_t* node) {
    const cudaError_t rc =
        ::cudaGraphAddNode(node, head.graph, head.dependencies.data(),
                           with_edges ? edges.data() : nullptr, head.dependencies.size(), &params);
    added = *node;
    return rc;
  });
  if (result != cudaSuccess) return result;
  if (params.type == cudaGraphNodeTypeGraph &&
      params.graph.ownership == cudaGraphChildGraphOwnershipMove) {
    adopt_child_graph(params.graph.graph, added);
  }
  if (params.type == cudaGraphNodeTypeMemAlloc) {
    note_graph_allocation(head.graph, params.alloc.dptr, params.alloc.bytesize);
    out.put<uint64_t>(reinterpret_cast<uint64_t>(params.alloc.dptr));
  }
  if (params.type == cudaGraphNodeTypeConditional) {
    const bool made = params.conditional.phGraph_out != nullptr;
    out.put<uint32_t>(made ? params.conditional.size : 0);
    for (uint32_t i = 0; made && i < params.conditional.size; ++i) {
      const cudaGraph_t body = params.conditional.phGraph_out[i];
      out.put<uint64_t>(wire_handle(body));
      adopt_child_graph(body, added);  // the node's: the session fills it, never destroys it
    }
  }
  return result;
}

// cudaGraphNodeSetParams, cudaGraphExecNodeSetParams: a child graph is not moved by a change of
// parameters (the runtime's to refuse; refused here, where the session would lose track of it).
cudaError_t run_set_node_params(Fn fn, WireReader& in, WireWriter& out) {
  const bool exec_form = fn == Fn::cudaGraphExecNodeSetParams;
  const auto exec = exec_form ? handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>()) : nullptr;
  const cudaGraphNode_t node = get_node(in);
  std::vector<cudaMemAccessDesc> access;
  cudaError_t vetted = cudaSuccess;
  cudaGraphNodeParams params = get_node_params(in, access, vetted);
  in.expect_end();
  if (params.type == cudaGraphNodeTypeGraph &&
      params.graph.ownership == cudaGraphChildGraphOwnershipMove) {
    vetted = first_failure(vetted, static_cast<cudaError_t>(services::refuse(
                                       cudaErrorInvalidValue, "cudart", "graph", params.graph.graph,
                                       "a change of parameters cannot move a graph")));
  }
  if (params.type == cudaGraphNodeTypeConditional) {
    // New bodies would be graphs the session never heard of: a conditional node's parameters are
    // fixed at its creation here.
    vetted = first_failure(vetted, static_cast<cudaError_t>(services::refuse(
                                       cudaErrorInvalidValue, "cudart", "node", node,
                                       "a conditional node's parameters are set at its creation")));
  }
  cudaError_t result = first_failure(vet(exec), vet_node(node), vetted);
  if (result == cudaSuccess) {
    result = exec_form ? ::cudaGraphExecNodeSetParams(exec, node, &params)
                       : ::cudaGraphNodeSetParams(node, &params);
  }
  out.put<int32_t>(result);
  return result;
}

// cudaGraphKernelNodeGetAttribute, cudaGraphKernelNodeSetAttribute (attribute_calls.cpp): the
// events a value names are vetted, as a launch's attributes are in the driver plugin.
cudaError_t run_kernel_node_attribute(Fn fn, WireReader& in, WireWriter& out) {
  const cudaGraphNode_t node = get_node(in);
  const bool set = fn == Fn::cudaGraphKernelNodeSetAttribute;
  return run_attribute_call(
      in, out, set, [&] { return vet_node(node); },
      [&](cudaLaunchAttributeID attribute, cudaLaunchAttributeValue* value) {
        return set ? ::cudaGraphKernelNodeSetAttribute(node, attribute, value)
                   : ::cudaGraphKernelNodeGetAttribute(node, attribute, value);
      });
}

// The graph's destruction: its nodes and the child graphs they own go with it; a child graph is
// its node's, not the session's to destroy.
cudaError_t run_graph_destroy(WireReader& in, WireWriter& out) {
  const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  in.expect_end();
  if (is_child_graph(graph)) {
    const auto result = static_cast<cudaError_t>(
        services::refuse(cudaErrorInvalidValue, "cudart", "graph", graph,
                         "owned by a child graph node: it goes with its node"));
    out.put<int32_t>(result);
    return result;
  }
  if (capture_graphs().building(graph)) {
    const auto result = static_cast<cudaError_t>(
        services::refuse(cudaErrorInvalidValue, "cudart", "graph", graph,
                         "a capture is building it: it is handed over when the capture ends"));
    out.put<int32_t>(result);
    return result;
  }
  auto held = release(graph);
  // The memory its allocation nodes placed leaves the ledger before the destroy, and comes back
  // if it fails (allocation_ledger.h says why first).
  services::LedgerWithdrawal withdrawn(services::session_services().allocations);
  cudaError_t result = held.vetted();
  if (result == cudaSuccess) {
    withdrawn.owned_by(graph);
    result = ::cudaGraphDestroy(graph);
  }
  out.put<int32_t>(result);
  if (result == cudaSuccess) {
    held.destroyed();
    withdrawn.done();
    conditional_handles().graph_gone(graph);
    forget_graph_nodes(graph);
    forget_user_object_references(graph);
  }
  return result;
}

cudaError_t run_node(Fn fn, WireReader& in, WireWriter& out) {
  switch (fn) {
    case Fn::cudaGraphAddEmptyNode: {
      const AddHead head = get_add_head(in);
      in.expect_end();
      return finish_add(out, head, cudaSuccess, [&](cudaGraphNode_t* node) {
        return ::cudaGraphAddEmptyNode(node, head.graph, head.dependencies.data(),
                                       head.dependencies.size());
      });
    }
    case Fn::cudaGraphNodeGetType: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaGraphNodeType type{};
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphNodeGetType(node, &type);
      out.put<int32_t>(result);
      if (result == cudaSuccess) out.put<int32_t>(marshal::enum_bits(type));
      return result;
    }
    case Fn::cudaGraphDestroyNode: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphDestroyNode(node);
      if (result == cudaSuccess) forget_node(node);
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphNodeFindInClone: {
      const cudaGraphNode_t original = get_node(in);
      const auto clone = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
      in.expect_end();
      cudaGraphNode_t found = nullptr;
      cudaError_t result = first_failure(vet_node(original), vet(clone));
      if (result == cudaSuccess) result = ::cudaGraphNodeFindInClone(&found, original, clone);
      if (result == cudaSuccess) adopt_node(found, clone);
      out.put<int32_t>(result);
      if (result == cudaSuccess) out.put<uint64_t>(wire_handle(found));
      return result;
    }
    case Fn::cudaGraphNodeGetEnabled:
    case Fn::cudaGraphNodeSetEnabled: {
      const auto exec = handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>());
      const cudaGraphNode_t node = get_node(in);
      unsigned enabled = in.get<uint32_t>();
      in.expect_end();
      cudaError_t result = first_failure(vet(exec), vet_node(node));
      if (result == cudaSuccess) {
        result = fn == Fn::cudaGraphNodeGetEnabled ? ::cudaGraphNodeGetEnabled(exec, node, &enabled)
                                                   : ::cudaGraphNodeSetEnabled(exec, node, enabled);
      }
      out.put<int32_t>(result);
      if (result == cudaSuccess) out.put<uint32_t>(enabled);
      return result;
    }
    case Fn::cudaGraphAddKernelNode: {
      const AddHead head = get_add_head(in);
      const cudaKernelNodeParams params = get_kernel_params(in);
      in.expect_end();
      return finish_add(out, head, cudaSuccess, [&](cudaGraphNode_t* node) {
        return ::cudaGraphAddKernelNode(node, head.graph, head.dependencies.data(),
                                        head.dependencies.size(), &params);
      });
    }
    case Fn::cudaGraphKernelNodeGetParams: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaKernelNodeParams params{};
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = kernel_node_params(node, params);
      std::vector<std::byte> bytes;
      std::optional<uint64_t> id;
      if (result == cudaSuccess) {
        id = kernel_parameters(params.func, params.kernelParams, bytes);
        // A kernel the session never resolved (or arguments only in "extra"): the stub could not
        // name it to the program.
        if (!id) result = cudaErrorNotSupported;
      }
      out.put<int32_t>(result);
      if (result != cudaSuccess) return result;
      put_record(out, KernelNodeWire{*id,
                                     {params.gridDim.x, params.gridDim.y, params.gridDim.z},
                                     {params.blockDim.x, params.blockDim.y, params.blockDim.z},
                                     params.sharedMemBytes});
      out.put_blob(bytes.data(), bytes.size());
      out.put<uint64_t>(wire_handle(graph_of(node)));
      return result;
    }
    case Fn::cudaGraphKernelNodeSetParams: {
      const cudaGraphNode_t node = get_node(in);
      const cudaKernelNodeParams params = get_kernel_params(in);
      in.expect_end();
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphKernelNodeSetParams(node, &params);
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphExecKernelNodeSetParams: {
      const auto exec = handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>());
      const cudaGraphNode_t node = get_node(in);
      const cudaKernelNodeParams params = get_kernel_params(in);
      in.expect_end();
      cudaError_t result = first_failure(vet(exec), vet_node(node));
      if (result == cudaSuccess) result = ::cudaGraphExecKernelNodeSetParams(exec, node, &params);
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphKernelNodeGetAttribute:
    case Fn::cudaGraphKernelNodeSetAttribute:
      return run_kernel_node_attribute(fn, in, out);
    case Fn::cudaGraphKernelNodeCopyAttributes: {
      const cudaGraphNode_t dst = get_node(in);
      const cudaGraphNode_t src = get_node(in);
      in.expect_end();
      cudaError_t result = first_failure(vet_node(dst), vet_node(src));
      if (result == cudaSuccess) result = ::cudaGraphKernelNodeCopyAttributes(dst, src);
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphAddMemsetNode: {
      const AddHead head = get_add_head(in);
      cudaError_t vetted = cudaSuccess;
      const cudaMemsetParams params = get_memset_params(in, vetted);
      in.expect_end();
      return finish_add(out, head, vetted, [&](cudaGraphNode_t* node) {
        return ::cudaGraphAddMemsetNode(node, head.graph, head.dependencies.data(),
                                        head.dependencies.size(), &params);
      });
    }
    case Fn::cudaGraphMemsetNodeGetParams: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaMemsetParams params{};
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphMemsetNodeGetParams(node, &params);
      out.put<int32_t>(result);
      if (result == cudaSuccess) {
        put_record(
            out, MemsetNodeWire{reinterpret_cast<uint64_t>(params.dst), params.pitch, params.value,
                                params.elementSize, params.width, params.height});
      }
      return result;
    }
    case Fn::cudaGraphMemsetNodeSetParams:
    case Fn::cudaGraphExecMemsetNodeSetParams: {
      const bool exec_form = fn == Fn::cudaGraphExecMemsetNodeSetParams;
      const auto exec = exec_form ? handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>()) : nullptr;
      const cudaGraphNode_t node = get_node(in);
      cudaError_t vetted = cudaSuccess;
      const cudaMemsetParams params = get_memset_params(in, vetted);
      in.expect_end();
      cudaError_t result = first_failure(vet(exec), vet_node(node), vetted);
      if (result == cudaSuccess) {
        result = exec_form ? ::cudaGraphExecMemsetNodeSetParams(exec, node, &params)
                           : ::cudaGraphMemsetNodeSetParams(node, &params);
      }
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphAddMemcpyNode: {
      const AddHead head = get_add_head(in);
      cudaError_t vetted = cudaSuccess;
      const cudaMemcpy3DParms params = get_memcpy_params(in, vetted);
      in.expect_end();
      return finish_add(out, head, vetted, [&](cudaGraphNode_t* node) {
        return ::cudaGraphAddMemcpyNode(node, head.graph, head.dependencies.data(),
                                        head.dependencies.size(), &params);
      });
    }
    case Fn::cudaGraphAddMemcpyNode1D: {
      const AddHead head = get_add_head(in);
      cudaError_t vetted = cudaSuccess;
      const auto copy = get_memcpy_1d(in, vetted);
      in.expect_end();
      return finish_add(out, head, vetted, [&](cudaGraphNode_t* node) {
        return ::cudaGraphAddMemcpyNode1D(
            node, head.graph, head.dependencies.data(), head.dependencies.size(),
            reinterpret_cast<void*>(copy.dst), reinterpret_cast<const void*>(copy.src), copy.count,
            copy.kind);
      });
    }
    case Fn::cudaGraphMemcpyNodeGetParams: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaMemcpy3DParms params{};
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphMemcpyNodeGetParams(node, &params);
      out.put<int32_t>(result);
      if (result != cudaSuccess) return result;
      auto side = [](const cudaPitchedPtr& p, const cudaPos& pos) {
        return CopySideWire{
            reinterpret_cast<uint64_t>(p.ptr), p.pitch, p.xsize, p.ysize, pos.x, pos.y, pos.z};
      };
      put_record(out, MemcpyNodeWire{side(params.srcPtr, params.srcPos),
                                     side(params.dstPtr, params.dstPos), params.extent.width,
                                     params.extent.height, params.extent.depth, params.kind,
                                     wire_handle(params.srcArray), wire_handle(params.dstArray)});
      return result;
    }
    case Fn::cudaGraphMemcpyNodeSetParams:
    case Fn::cudaGraphExecMemcpyNodeSetParams: {
      const bool exec_form = fn == Fn::cudaGraphExecMemcpyNodeSetParams;
      const auto exec = exec_form ? handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>()) : nullptr;
      const cudaGraphNode_t node = get_node(in);
      cudaError_t vetted = cudaSuccess;
      const cudaMemcpy3DParms params = get_memcpy_params(in, vetted);
      in.expect_end();
      cudaError_t result = first_failure(vet(exec), vet_node(node), vetted);
      if (result == cudaSuccess) {
        result = exec_form ? ::cudaGraphExecMemcpyNodeSetParams(exec, node, &params)
                           : ::cudaGraphMemcpyNodeSetParams(node, &params);
      }
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphMemcpyNodeSetParams1D:
    case Fn::cudaGraphExecMemcpyNodeSetParams1D: {
      const bool exec_form = fn == Fn::cudaGraphExecMemcpyNodeSetParams1D;
      const auto exec = exec_form ? handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>()) : nullptr;
      const cudaGraphNode_t node = get_node(in);
      cudaError_t vetted = cudaSuccess;
      const auto copy = get_memcpy_1d(in, vetted);
      in.expect_end();
      cudaError_t result = first_failure(vet(exec), vet_node(node), vetted);
      auto* dst = reinterpret_cast<void*>(copy.dst);
      const auto* src = reinterpret_cast<const void*>(copy.src);
      const auto kind = copy.kind;
      if (result == cudaSuccess) {
        result = exec_form
                     ? ::cudaGraphExecMemcpyNodeSetParams1D(exec, node, dst, src, copy.count, kind)
                     : ::cudaGraphMemcpyNodeSetParams1D(node, dst, src, copy.count, kind);
      }
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphAddEventRecordNode:
    case Fn::cudaGraphAddEventWaitNode: {
      const AddHead head = get_add_head(in);
      const auto event = handle_from_wire<cudaEvent_t>(in.get<uint64_t>());
      in.expect_end();
      return finish_add(out, head, vet(event), [&](cudaGraphNode_t* node) {
        const auto* deps = head.dependencies.data();
        const size_t n = head.dependencies.size();
        return fn == Fn::cudaGraphAddEventRecordNode
                   ? ::cudaGraphAddEventRecordNode(node, head.graph, deps, n, event)
                   : ::cudaGraphAddEventWaitNode(node, head.graph, deps, n, event);
      });
    }
    case Fn::cudaGraphEventRecordNodeGetEvent:
    case Fn::cudaGraphEventWaitNodeGetEvent: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaEvent_t event = nullptr;
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) {
        result = fn == Fn::cudaGraphEventRecordNodeGetEvent
                     ? ::cudaGraphEventRecordNodeGetEvent(node, &event)
                     : ::cudaGraphEventWaitNodeGetEvent(node, &event);
      }
      out.put<int32_t>(result);
      if (result == cudaSuccess) out.put<uint64_t>(wire_handle(event));
      return result;
    }
    case Fn::cudaGraphEventRecordNodeSetEvent:
    case Fn::cudaGraphEventWaitNodeSetEvent:
    case Fn::cudaGraphExecEventRecordNodeSetEvent:
    case Fn::cudaGraphExecEventWaitNodeSetEvent: {
      const bool exec_form = fn == Fn::cudaGraphExecEventRecordNodeSetEvent ||
                             fn == Fn::cudaGraphExecEventWaitNodeSetEvent;
      const auto exec = exec_form ? handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>()) : nullptr;
      const cudaGraphNode_t node = get_node(in);
      const auto event = handle_from_wire<cudaEvent_t>(in.get<uint64_t>());
      in.expect_end();
      cudaError_t result = first_failure(vet(exec), vet_node(node), vet(event));
      if (result != cudaSuccess) {
      } else if (fn == Fn::cudaGraphEventRecordNodeSetEvent) {
        result = ::cudaGraphEventRecordNodeSetEvent(node, event);
      } else if (fn == Fn::cudaGraphEventWaitNodeSetEvent) {
        result = ::cudaGraphEventWaitNodeSetEvent(node, event);
      } else if (fn == Fn::cudaGraphExecEventRecordNodeSetEvent) {
        result = ::cudaGraphExecEventRecordNodeSetEvent(exec, node, event);
      } else {
        result = ::cudaGraphExecEventWaitNodeSetEvent(exec, node, event);
      }
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphAddChildGraphNode: {
      const AddHead head = get_add_head(in);
      const auto child = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
      in.expect_end();
      return finish_add(out, head, vet(child), [&](cudaGraphNode_t* node) {
        return ::cudaGraphAddChildGraphNode(node, head.graph, head.dependencies.data(),
                                            head.dependencies.size(), child);
      });
    }
    case Fn::cudaGraphChildGraphNodeGetGraph: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaGraph_t child = nullptr;
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphChildGraphNodeGetGraph(node, &child);
      if (result == cudaSuccess) adopt_child_graph(child, node);
      out.put<int32_t>(result);
      if (result == cudaSuccess) out.put<uint64_t>(wire_handle(child));
      return result;
    }
    case Fn::cudaGraphExecChildGraphNodeSetParams: {
      const auto exec = handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>());
      const cudaGraphNode_t node = get_node(in);
      const auto child = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
      in.expect_end();
      cudaError_t result = first_failure(vet(exec), vet_node(node), vet(child));
      if (result == cudaSuccess) result = ::cudaGraphExecChildGraphNodeSetParams(exec, node, child);
      out.put<int32_t>(result);
      return result;
    }
    case Fn::cudaGraphAddMemAllocNode:
      return run_add_mem_alloc(in, out);
    case Fn::cudaGraphAddNode:
      return run_add_node(in, out);
    case Fn::cudaGraphNodeSetParams:
    case Fn::cudaGraphExecNodeSetParams:
      return run_set_node_params(fn, in, out);
    case Fn::cudaGraphMemAllocNodeGetParams: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaMemAllocNodeParams params{};
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphMemAllocNodeGetParams(node, &params);
      out.put<int32_t>(result);
      if (result != cudaSuccess) return result;
      const size_t n = std::min<size_t>(params.accessDescCount, kMaxAccessDescs);
      cudaMemPoolProps props = params.poolProps;
      props.win32SecurityAttributes = nullptr;  // the worker's pointer, nothing of the client's
      out.put_raw(&props, sizeof props);
      out.put<uint32_t>(static_cast<uint32_t>(params.accessDescs != nullptr ? n : 0));
      if (params.accessDescs != nullptr && n > 0) {
        out.put_raw(params.accessDescs, n * sizeof(cudaMemAccessDesc));
      }
      out.put<uint64_t>(params.bytesize);
      out.put<uint64_t>(reinterpret_cast<uint64_t>(params.dptr));
      out.put<uint64_t>(wire_handle(graph_of(node)));
      return result;
    }
    case Fn::cudaGraphAddMemFreeNode: {
      const AddHead head = get_add_head(in);
      auto* address = reinterpret_cast<void*>(in.get<uint64_t>());
      in.expect_end();
      return finish_add(out, head, vet_device_pointer(address), [&](cudaGraphNode_t* node) {
        return ::cudaGraphAddMemFreeNode(node, head.graph, head.dependencies.data(),
                                         head.dependencies.size(), address);
      });
    }
    case Fn::cudaGraphMemFreeNodeGetParams: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      void* address = nullptr;
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphMemFreeNodeGetParams(node, &address);
      out.put<int32_t>(result);
      if (result == cudaSuccess) out.put<uint64_t>(reinterpret_cast<uint64_t>(address));
      return result;
    }
    case Fn::cudaGraphNodeGetDependencies:
    case Fn::cudaGraphNodeGetDependentNodes:
      return run_node_neighbours(fn, in, out);
    case Fn::cudaGraphGetEdges:
      return run_graph_edges(in, out);
    case Fn::cudaGraphAddDependencies:
    case Fn::cudaGraphRemoveDependencies:
      return run_dependencies(fn, in, out);
    case Fn::cudaGraphDestroy:
      return run_graph_destroy(in, out);
    case Fn::cudaGraphAddHostNode: {
      const AddHead head = get_add_head(in);
      const uint64_t token = in.get<uint64_t>();
      in.expect_end();
      return finish_add(
          out, head, token != 0 ? cudaSuccess : cudaErrorInvalidValue, [&](cudaGraphNode_t* node) {
            return with_host_gate(token, [&](const cudaHostNodeParams& p) {
              return ::cudaGraphAddHostNode(node, head.graph, head.dependencies.data(),
                                            head.dependencies.size(), &p);
            });
          });
    }
    case Fn::cudaGraphHostNodeGetParams: {
      const cudaGraphNode_t node = get_node(in);
      in.expect_end();
      cudaHostNodeParams p{};
      cudaError_t result = vet_node(node);
      if (result == cudaSuccess) result = ::cudaGraphHostNodeGetParams(node, &p);
      const uint64_t token = result == cudaSuccess ? host_gate_token(p) : 0;
      if (result == cudaSuccess && token == 0) result = cudaErrorNotSupported;  // not ours
      out.put<int32_t>(result);
      if (result == cudaSuccess) out.put<uint64_t>(token);
      return result;
    }
    case Fn::cudaGraphHostNodeSetParams:
    case Fn::cudaGraphExecHostNodeSetParams: {
      const bool exec_form = fn == Fn::cudaGraphExecHostNodeSetParams;
      const auto exec = exec_form ? handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>()) : nullptr;
      const cudaGraphNode_t node = get_node(in);
      const uint64_t token = in.get<uint64_t>();
      in.expect_end();
      cudaError_t result = first_failure(vet(exec), vet_node(node),
                                         token != 0 ? cudaSuccess : cudaErrorInvalidValue);
      if (result == cudaSuccess) {
        result = with_host_gate(token, [&](const cudaHostNodeParams& p) {
          return exec_form ? ::cudaGraphExecHostNodeSetParams(exec, node, &p)
                           : ::cudaGraphHostNodeSetParams(node, &p);
        });
      }
      out.put<int32_t>(result);
      return result;
    }
    default:
      raise(ErrorKind::kUnimplemented, "not a graph node call");
  }
}

bool is_node_call(Fn fn) {
  const auto id = static_cast<uint32_t>(fn);
  return (id >= static_cast<uint32_t>(Fn::cudaGraphAddEmptyNode) &&
          id <= static_cast<uint32_t>(Fn::cudaGraphKernelNodeSetAttribute)) ||
         fn == Fn::cudaGraphDestroy || is_host_node_call(fn);
}

}  // namespace

void forget_conditional_handles() {
  conditional_handles().clear();
}

bool run_graph_node_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  if (fn == Fn::cudaGraphConditionalHandleCreate) {
    result = run_conditional_handle_create(in, out);
    return true;
  }
  if (!is_node_call(fn)) return false;
  result = run_node(fn, in, out);
  return true;
}

}  // namespace gvirtus::cudart

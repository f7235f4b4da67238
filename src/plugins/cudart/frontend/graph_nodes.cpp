// Graphs built node by node in the stub (rows 221-267 and 210 of cudart_calls.txt; wire:
// common/graph_node_wire.h). Nodes live in the backend's process, as graphs do; the stub hands
// out the runtime's node handles, which the backend vets as the session's. Every call waits: each
// returns a node, a value, or an immediate error of the runtime's.
//
// Kernel nodes travel as launches do (kernel_arguments.h): the stub's kernel id and the parameter
// bytes. cudaGraphKernelNodeGetParams gives the program its own host function and an argument
// array of the stub's: the copies stay valid until the node's parameters are set again, the node
// is destroyed or its graph is (as the runtime's own); a child graph's nodes' copies stay until
// the process ends.
//
// Copy nodes run each time their graph does, on the backend's GPU: a side in the client's own
// memory (pageable memory, or page-locked memory over tcp) is staged through a block on the
// backend by a host function of the stub's (host_staging.h; copies the capture path takes the
// same way), and a copy with both sides there is that host function alone, copying here.
// Page-locked memory in shm's arena is the GPU's to reach and travels as its device pointer. Each
// kind's parameters are packed, and refused, by graph_node_params.h.
//
// A memory allocation node's address is recorded as device memory until its graph is destroyed.
//
// A host node's function runs in this process, on the session's callback thread, each time the
// graph reaches the node on the backend (host_functions.h): it travels as a token.
#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/conditional_bodies.h"
#include "common/wire_record.h"
#include "plugins/cudart/common/graph_node_wire.h"
#include "plugins/cudart/common/module_wire.h"
#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/graph_node_params.h"
#include "plugins/cudart/frontend/host_functions.h"
#include "plugins/cudart/frontend/host_staging.h"
#include "plugins/cudart/frontend/registry.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// An argument array handed out by cudaGraphKernelNodeGetParams.
struct ArgumentsCopy {
  cudaGraph_t graph;
  std::vector<std::byte> bytes;  // the parameter bytes (new[]'s alignment suits any parameter)
  std::vector<void*> pointers;   // one per parameter, into bytes
};

std::mutex& copies_mutex = *new std::mutex;
// Per node, the copies handed out since its parameters last changed (never destroyed: exit
// handlers may still ask).
auto& argument_copies =
    *new std::unordered_map<cudaGraphNode_t, std::vector<std::unique_ptr<ArgumentsCopy>>>;

// The access descriptors cudaGraphMemAllocNodeGetParams handed out, per node (kept as the
// argument copies are), and the device memory the graphs' allocation nodes placed.
struct AccessCopy {
  cudaGraph_t graph;
  std::vector<cudaMemAccessDesc> descriptors;
};
auto& access_copies =
    *new std::unordered_map<cudaGraphNode_t, std::vector<std::unique_ptr<AccessCopy>>>;
auto& graph_allocations = *new std::unordered_map<cudaGraph_t, std::vector<const void*>>;
// Conditional nodes' bodies, in the arrays their parameters point at.
auto& conditional_bodies = *new ConditionalBodies<cudaGraphNode_t, cudaGraph_t>;

void drop_copies(cudaGraphNode_t node) {
  std::lock_guard lock(copies_mutex);
  argument_copies.erase(node);
  access_copies.erase(node);
  conditional_bodies.node_gone(node);
}

void drop_graph_copies(cudaGraph_t graph) {
  std::lock_guard lock(copies_mutex);
  conditional_bodies.graph_gone(graph);
  if (const auto it = graph_allocations.find(graph); it != graph_allocations.end()) {
    for (const void* address : it->second) device_allocations().remove(address);
    graph_allocations.erase(it);
  }
  std::erase_if(argument_copies, [&](const auto& entry) {
    return !entry.second.empty() && entry.second.front()->graph == graph;
  });
  std::erase_if(access_copies, [&](const auto& entry) {
    return !entry.second.empty() && entry.second.front()->graph == graph;
  });
}

void put_nodes(WireWriter& w, const cudaGraphNode_t* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) w.put<uint64_t>(wire_handle(nodes[i]));
}

std::vector<cudaGraphNode_t> get_nodes(WireReader& r, size_t n) {
  std::vector<cudaGraphNode_t> nodes(n);
  for (auto& node : nodes) node = handle_from_wire<cudaGraphNode_t>(r.get<uint64_t>());
  return nodes;
}

// An "add" call: the head, the kind's parameters (`kind`), the new node on success.
cudaError_t add_node(Fn fn, cudaGraphNode_t* node, cudaGraph_t graph,
                     const cudaGraphNode_t* dependencies, size_t n, Encoder kind) {
  if (node == nullptr || (dependencies == nullptr && n > 0) || n > kMaxNodeEdges) {
    return invalid_value();
  }
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        w.put<uint64_t>(wire_handle(graph));
        w.put<uint32_t>(static_cast<uint32_t>(n));
        put_nodes(w, dependencies, n);
        kind(w);
      },
      [&](WireReader& r) {
        if (r.remaining() != 0) *node = handle_from_wire<cudaGraphNode_t>(r.get<uint64_t>());
      });
}

// A call that names a node (an executable graph first for the exec forms) and replies with its
// result only.
cudaError_t set_node(Fn fn, cudaGraphExec_t exec, bool exec_form, cudaGraphNode_t node,
                     Encoder params) {
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        if (exec_form) w.put<uint64_t>(wire_handle(exec));
        w.put<uint64_t>(wire_handle(node));
        params(w);
      },
      [](WireReader&) {});
}

// A graph's allocation node placed `address`: device memory until the graph goes.
void note_graph_allocation(cudaGraph_t graph, void* address, size_t bytes) {
  note_allocated(Fn::cudaGraphAddMemAllocNode, address, bytes);
  std::lock_guard lock(copies_mutex);
  graph_allocations[graph].push_back(address);
}

// cudaGraphNodeGetDependencies, cudaGraphNodeGetDependentNodes, as the runtime: without an
// array the count; with one, up to *count nodes (and edge data when asked).
cudaError_t neighbours(Fn fn, cudaGraphNode_t node, cudaGraphNode_t* nodes,
                       cudaGraphEdgeData* edges, size_t* count) {
  uint8_t wanted = 0;
  if (nodes != nullptr) wanted |= kShapeNodes;
  if (edges != nullptr) wanted |= kShapeEdges;
  if (count != nullptr) wanted |= kShapeCount;
  const uint64_t capacity = nodes != nullptr && count != nullptr ? *count : 0;
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        w.put<uint64_t>(wire_handle(node));
        w.put<uint8_t>(wanted);
        w.put<uint64_t>(capacity);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        const uint64_t got_count = r.get<uint64_t>();
        const uint32_t n = r.get<uint32_t>();
        if (n > capacity) raise(ErrorKind::kInvalidInput, "more graph nodes than asked");
        const auto got = get_nodes(r, n);
        const bool with_edges = r.get_bool();
        if (with_edges && edges != nullptr && n > 0) {
          std::memcpy(edges, r.get_raw(n * sizeof(cudaGraphEdgeData)).data(),
                      n * sizeof(cudaGraphEdgeData));
        }
        if (nodes != nullptr && n > 0) std::memcpy(nodes, got.data(), n * sizeof *nodes);
        if (count != nullptr) *count = got_count;
      });
}

cudaError_t dependencies(Fn fn, cudaGraph_t graph, const cudaGraphNode_t* from,
                         const cudaGraphNode_t* to, const cudaGraphEdgeData* edges, size_t n) {
  if (n > 0 && (from == nullptr || to == nullptr)) return invalid_value();
  if (n > kMaxNodeEdges) return invalid_value();
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        w.put<uint64_t>(wire_handle(graph));
        w.put<uint32_t>(static_cast<uint32_t>(n));
        put_nodes(w, from, n);
        put_nodes(w, to, n);
        w.put<uint8_t>(edges != nullptr);
        if (edges != nullptr && n > 0) w.put_raw(edges, n * sizeof(cudaGraphEdgeData));
      },
      [](WireReader&) {});
}

// cudaGraphEventRecordNodeGetEvent, cudaGraphEventWaitNodeGetEvent,
// cudaGraphChildGraphNodeGetGraph: one handle back.
template <typename T>
cudaError_t get_handle(Fn fn, cudaGraphNode_t node, T* out) {
  if (out == nullptr) return invalid_value();
  return remote_sync(
      fn, [&](WireWriter& w) { w.put<uint64_t>(wire_handle(node)); },
      [&](WireReader& r) {
        if (r.remaining() != 0) *out = handle_from_wire<T>(r.get<uint64_t>());
      });
}

cudaError_t set_event(Fn fn, cudaGraphExec_t exec, bool exec_form, cudaGraphNode_t node,
                      cudaEvent_t event) {
  return set_node(fn, exec, exec_form, node,
                  [&](WireWriter& w) { w.put<uint64_t>(wire_handle(event)); });
}

}  // namespace
}  // namespace gvirtus::cudart

namespace gvirtus::cudart {

cudaGraph_t* keep_conditional_bodies(cudaGraphNode_t node, cudaGraph_t graph,
                                     std::vector<cudaGraph_t> bodies) {
  return conditional_bodies.keep(node, graph, std::move(bodies));
}

}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;
using gvirtus::WireReader;
using gvirtus::WireWriter;

// A handle for the graph's conditional nodes, made by the backend's runtime (which records it
// with the graph: a node may name only a handle made for its own graph).
GVIRTUS_CUDART_EXPORT cudaError_t
cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* pHandle_out, cudaGraph_t graph,
                                 unsigned int defaultLaunchValue, unsigned int flags) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) {
    return cr::refuse_locally(init);
  }
  if (pHandle_out == nullptr) return cr::invalid_value();
  cudaGraphConditionalHandle handle = 0;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaGraphConditionalHandleCreate,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(graph));
        w.put<uint32_t>(defaultLaunchValue);
        w.put<uint32_t>(flags);
      },
      [&](WireReader& r) {
        if (r.remaining() != 0) handle = r.get<uint64_t>();
      });
  if (result == cudaSuccess) *pHandle_out = handle;
  return result;
}

// The graph's nodes (and the argument arrays handed out for them) go with it.
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaGraphDestroy, [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(graph)); },
      [](WireReader&) {});
  if (result == cudaSuccess) {
    cr::drop_graph_copies(graph);
    cr::forget_staged_graph(graph);
  }
  return result;
}

// A clone's staged copy nodes are the clone's own (host_staging.h).
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphClone(cudaGraph_t* pGraphClone,
                                                 cudaGraph_t originalGraph) {
  const cudaError_t result = cr::remote::cudaGraphClone(pGraphClone, originalGraph);
  if (result == cudaSuccess) cr::staged_copies_cloned(originalGraph, *pGraphClone);
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* pGraphNode,
                                                        cudaGraph_t graph,
                                                        const cudaGraphNode_t* pDependencies,
                                                        size_t numDependencies) {
  return cr::add_node(cr::Fn::cudaGraphAddEmptyNode, pGraphNode, graph, pDependencies,
                      numDependencies, [](WireWriter&) {});
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph,
                                                           const cudaGraphNode_t* from,
                                                           const cudaGraphNode_t* to,
                                                           const cudaGraphEdgeData* edgeData,
                                                           size_t numDependencies) {
  return cr::dependencies(cr::Fn::cudaGraphAddDependencies, graph, from, to, edgeData,
                          numDependencies);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph,
                                                              const cudaGraphNode_t* from,
                                                              const cudaGraphNode_t* to,
                                                              const cudaGraphEdgeData* edgeData,
                                                              size_t numDependencies) {
  return cr::dependencies(cr::Fn::cudaGraphRemoveDependencies, graph, from, to, edgeData,
                          numDependencies);
}

// As the runtime: without arrays the count; with them, up to *numEdges edges.
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from,
                                                    cudaGraphNode_t* to,
                                                    cudaGraphEdgeData* edgeData, size_t* numEdges) {
  if ((from == nullptr) != (to == nullptr)) return cr::invalid_value();
  uint8_t wanted = 0;
  if (from != nullptr) wanted |= cr::kShapeNodes;
  if (edgeData != nullptr) wanted |= cr::kShapeEdges;
  if (numEdges != nullptr) wanted |= cr::kShapeCount;
  const uint64_t capacity = from != nullptr && numEdges != nullptr ? *numEdges : 0;
  return cr::remote_sync(
      cr::Fn::cudaGraphGetEdges,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(graph));
        w.put<uint8_t>(wanted);
        w.put<uint64_t>(capacity);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        const uint64_t count = r.get<uint64_t>();
        const uint32_t n = r.get<uint32_t>();
        if (n > capacity) raise(gvirtus::ErrorKind::kInvalidInput, "more edges than asked");
        const auto got_from = cr::get_nodes(r, n);
        const auto got_to = cr::get_nodes(r, n);
        const bool with_edges = r.get_bool();
        if (with_edges && edgeData != nullptr && n > 0) {
          std::memcpy(edgeData, r.get_raw(n * sizeof(cudaGraphEdgeData)).data(),
                      n * sizeof(cudaGraphEdgeData));
        }
        if (from != nullptr && n > 0) {
          std::memcpy(from, got_from.data(), n * sizeof *from);
          std::memcpy(to, got_to.data(), n * sizeof *to);
        }
        if (numEdges != nullptr) *numEdges = count;
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node,
                                                       cudaGraphNodeType* pType) {
  if (pType == nullptr) return cr::invalid_value();
  if (cr::is_staged_copy_node(node)) {  // a child graph on the backend (host_staging.h)
    *pType = cudaGraphNodeTypeMemcpy;
    return cudaSuccess;
  }
  return cr::remote_sync(
      cr::Fn::cudaGraphNodeGetType, [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(node)); },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        const int32_t bits = r.get<int32_t>();
        static_assert(sizeof *pType == sizeof bits);
        std::memcpy(pType, &bits, sizeof bits);
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node,
                                                               cudaGraphNode_t* pDependencies,
                                                               cudaGraphEdgeData* edgeData,
                                                               size_t* pNumDependencies) {
  return cr::neighbours(cr::Fn::cudaGraphNodeGetDependencies, node, pDependencies, edgeData,
                        pNumDependencies);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node,
                                                                 cudaGraphNode_t* pDependentNodes,
                                                                 cudaGraphEdgeData* edgeData,
                                                                 size_t* pNumDependentNodes) {
  return cr::neighbours(cr::Fn::cudaGraphNodeGetDependentNodes, node, pDependentNodes, edgeData,
                        pNumDependentNodes);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) {
  const cudaError_t result =
      cr::set_node(cr::Fn::cudaGraphDestroyNode, nullptr, false, node, [](WireWriter&) {});
  if (result == cudaSuccess) {
    cr::drop_copies(node);
    cr::forget_staged_node(node);
  }
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* pNode,
                                                           cudaGraphNode_t originalNode,
                                                           cudaGraph_t clonedGraph) {
  if (pNode == nullptr) return cr::invalid_value();
  return cr::remote_sync(
      cr::Fn::cudaGraphNodeFindInClone,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(originalNode));
        w.put<uint64_t>(cr::wire_handle(clonedGraph));
      },
      [&](WireReader& r) {
        if (r.remaining() != 0) *pNode = cr::handle_from_wire<cudaGraphNode_t>(r.get<uint64_t>());
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t hGraphExec,
                                                          cudaGraphNode_t hNode,
                                                          unsigned int* isEnabled) {
  if (isEnabled == nullptr) return cr::invalid_value();
  return cr::remote_sync(
      cr::Fn::cudaGraphNodeGetEnabled,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(hGraphExec));
        w.put<uint64_t>(cr::wire_handle(hNode));
        w.put<uint32_t>(*isEnabled);
      },
      [&](WireReader& r) {
        if (r.remaining() != 0) *isEnabled = r.get<uint32_t>();
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t hGraphExec,
                                                          cudaGraphNode_t hNode,
                                                          unsigned int isEnabled) {
  return cr::remote_sync(
      cr::Fn::cudaGraphNodeSetEnabled,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(hGraphExec));
        w.put<uint64_t>(cr::wire_handle(hNode));
        w.put<uint32_t>(isEnabled);
      },
      [&](WireReader& r) {
        if (r.remaining() != 0) (void)r.get<uint32_t>();
      });
}

// Kernel nodes.

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode,
                                                         cudaGraph_t graph,
                                                         const cudaGraphNode_t* pDependencies,
                                                         size_t numDependencies,
                                                         const cudaKernelNodeParams* pNodeParams) {
  cr::PackedKernelParams packed;
  if (const cudaError_t rc = cr::pack(pNodeParams, packed, "cudaGraphAddKernelNode");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::add_node(cr::Fn::cudaGraphAddKernelNode, pGraphNode, graph, pDependencies,
                      numDependencies, [&](WireWriter& w) { cr::put_kernel(w, packed); });
}

// The program's own host function, and an argument array of the stub's (see the file's head).
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node,
                                                               cudaKernelNodeParams* pNodeParams) {
  if (pNodeParams == nullptr) return cr::invalid_value();
  return cr::remote_sync(
      cr::Fn::cudaGraphKernelNodeGetParams,
      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(node)); },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        const auto wire = gvirtus::get_record<cr::KernelNodeWire>(r);
        const auto bytes = r.get_blob(cr::kMaxParamBytes);
        const auto graph = cr::handle_from_wire<cudaGraph_t>(r.get<uint64_t>());
        const cr::Kernel* kernel = cr::find_kernel(reinterpret_cast<const void*>(wire.kernel));
        if (kernel == nullptr || kernel->layout == nullptr ||
            bytes.size() != kernel->layout->param_bytes) {
          raise(gvirtus::ErrorKind::kInvalidInput, "a kernel node of no kernel of the program");
        }
        std::lock_guard lock(cr::copies_mutex);
        auto& copies = cr::argument_copies[node];
        if (copies.empty() || copies.back()->graph != graph ||
            copies.back()->bytes.size() != bytes.size() ||
            std::memcmp(copies.back()->bytes.data(), bytes.data(), bytes.size()) != 0) {
          auto copy = std::make_unique<cr::ArgumentsCopy>();
          copy->graph = graph;
          copy->bytes.assign(bytes.begin(), bytes.end());
          for (const auto& param : kernel->layout->params) {
            copy->pointers.push_back(copy->bytes.data() + param.offset);
          }
          copies.push_back(std::move(copy));
        }
        cr::ArgumentsCopy& copy = *copies.back();
        pNodeParams->func = const_cast<void*>(kernel->host_function);
        pNodeParams->gridDim = dim3(wire.grid.x, wire.grid.y, wire.grid.z);
        pNodeParams->blockDim = dim3(wire.block.x, wire.block.y, wire.block.z);
        pNodeParams->sharedMemBytes = wire.shared_bytes;
        pNodeParams->kernelParams = copy.pointers.empty() ? nullptr : copy.pointers.data();
        pNodeParams->extra = nullptr;
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const cudaKernelNodeParams* pNodeParams) {
  cr::PackedKernelParams packed;
  if (const cudaError_t rc = cr::pack(pNodeParams, packed, "cudaGraphKernelNodeSetParams");
      rc != cudaSuccess) {
    return rc;
  }
  const cudaError_t result = cr::set_node(cr::Fn::cudaGraphKernelNodeSetParams, nullptr, false,
                                          node, [&](WireWriter& w) { cr::put_kernel(w, packed); });
  if (result == cudaSuccess) cr::drop_copies(node);
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaKernelNodeParams* pNodeParams) {
  cr::PackedKernelParams packed;
  if (const cudaError_t rc = cr::pack(pNodeParams, packed, "cudaGraphExecKernelNodeSetParams");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::set_node(cr::Fn::cudaGraphExecKernelNodeSetParams, hGraphExec, true, node,
                      [&](WireWriter& w) { cr::put_kernel(w, packed); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphKernelNodeGetAttribute(
    cudaGraphNode_t hNode, cudaKernelNodeAttrID attr, cudaKernelNodeAttrValue* value_out) {
  if (value_out == nullptr) return cr::invalid_value();
  return cr::remote_sync(
      cr::Fn::cudaGraphKernelNodeGetAttribute,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(hNode));
        w.put<int32_t>(gvirtus::marshal::enum_bits(attr));
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        std::memcpy(value_out, r.get_raw(sizeof *value_out).data(), sizeof *value_out);
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphKernelNodeSetAttribute(
    cudaGraphNode_t hNode, cudaKernelNodeAttrID attr, const cudaKernelNodeAttrValue* value) {
  if (value == nullptr) return cr::invalid_value();
  return cr::set_node(cr::Fn::cudaGraphKernelNodeSetAttribute, nullptr, false, hNode,
                      [&](WireWriter& w) {
                        w.put<int32_t>(gvirtus::marshal::enum_bits(attr));
                        w.put_raw(value, sizeof *value);
                      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t hDst,
                                                                    cudaGraphNode_t hSrc) {
  return cr::set_node(cr::Fn::cudaGraphKernelNodeCopyAttributes, nullptr, false, hDst,
                      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(hSrc)); });
}

// Memset nodes: the destination is the backend's to vet (device memory over the whole extent).

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* pGraphNode,
                                                         cudaGraph_t graph,
                                                         const cudaGraphNode_t* pDependencies,
                                                         size_t numDependencies,
                                                         const cudaMemsetParams* pMemsetParams) {
  if (pMemsetParams == nullptr) return cr::invalid_value();
  return cr::add_node(cr::Fn::cudaGraphAddMemsetNode, pGraphNode, graph, pDependencies,
                      numDependencies,
                      [&](WireWriter& w) { put_record(w, cr::pack(*pMemsetParams)); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node,
                                                               cudaMemsetParams* pNodeParams) {
  if (pNodeParams == nullptr) return cr::invalid_value();
  return cr::remote_sync(
      cr::Fn::cudaGraphMemsetNodeGetParams,
      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(node)); },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        const auto wire = gvirtus::get_record<cr::MemsetNodeWire>(r);
        pNodeParams->dst = reinterpret_cast<void*>(wire.dst);
        pNodeParams->pitch = wire.pitch;
        pNodeParams->value = wire.value;
        pNodeParams->elementSize = wire.element_size;
        pNodeParams->width = wire.width;
        pNodeParams->height = wire.height;
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const cudaMemsetParams* pNodeParams) {
  if (pNodeParams == nullptr) return cr::invalid_value();
  return cr::set_node(cr::Fn::cudaGraphMemsetNodeSetParams, nullptr, false, node,
                      [&](WireWriter& w) { put_record(w, cr::pack(*pNodeParams)); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaMemsetParams* pNodeParams) {
  if (pNodeParams == nullptr) return cr::invalid_value();
  return cr::set_node(cr::Fn::cudaGraphExecMemsetNodeSetParams, hGraphExec, true, node,
                      [&](WireWriter& w) { put_record(w, cr::pack(*pNodeParams)); });
}

// Copy nodes (see the file's head for host memory).

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* pGraphNode,
                                                         cudaGraph_t graph,
                                                         const cudaGraphNode_t* pDependencies,
                                                         size_t numDependencies,
                                                         const cudaMemcpy3DParms* pCopyParams) {
  if (pCopyParams != nullptr) {
    if (const cr::SidesHere here = cr::sides_here(*pCopyParams); here.any()) {
      return cr::add_staged_copy_node(pGraphNode, graph, pDependencies, numDependencies,
                                      *pCopyParams, here);
    }
  }
  cr::MemcpyNodeWire wire{};
  if (const cudaError_t rc = cr::pack(pCopyParams, wire, "cudaGraphAddMemcpyNode");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::add_node(cr::Fn::cudaGraphAddMemcpyNode, pGraphNode, graph, pDependencies,
                      numDependencies, [&](WireWriter& w) { put_record(w, wire); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(
    cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
    size_t numDependencies, void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  if (count > 0) {
    const cudaMemcpy3DParms copy = cr::linear_copy(dst, src, count, kind);
    if (const cr::SidesHere here = cr::sides_here(copy); here.any()) {
      return cr::add_staged_copy_node(pGraphNode, graph, pDependencies, numDependencies, copy,
                                      here);
    }
  }
  cr::Memcpy1DNodeWire wire{};
  if (const cudaError_t rc = cr::pack_1d(dst, src, count, kind, wire, "cudaGraphAddMemcpyNode1D");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::add_node(cr::Fn::cudaGraphAddMemcpyNode1D, pGraphNode, graph, pDependencies,
                      numDependencies, [&](WireWriter& w) { put_record(w, wire); });
}

// The pointers the runtime reports are those it copies between: an arena block's device pointer
// (its host pointer where the arena is mapped at the same address on both sides).
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node,
                                                               cudaMemcpy3DParms* pNodeParams) {
  if (pNodeParams == nullptr) return cr::invalid_value();
  if (cr::staged_copy_params(node, *pNodeParams)) return cudaSuccess;
  return cr::remote_sync(
      cr::Fn::cudaGraphMemcpyNodeGetParams,
      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(node)); },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        const auto wire = gvirtus::get_record<cr::MemcpyNodeWire>(r);
        auto pitched = [](const cr::CopySideWire& s) {
          return cudaPitchedPtr{reinterpret_cast<void*>(s.ptr), s.pitch, s.xsize, s.ysize};
        };
        *pNodeParams = cudaMemcpy3DParms{};
        pNodeParams->srcArray = cr::handle_from_wire<cudaArray_t>(wire.src_array);
        pNodeParams->dstArray = cr::handle_from_wire<cudaArray_t>(wire.dst_array);
        pNodeParams->srcPtr = pitched(wire.src);
        pNodeParams->srcPos = cudaPos{wire.src.x, wire.src.y, wire.src.z};
        pNodeParams->dstPtr = pitched(wire.dst);
        pNodeParams->dstPos = cudaPos{wire.dst.x, wire.dst.y, wire.dst.z};
        pNodeParams->extent = cudaExtent{wire.width, wire.height, wire.depth};
        pNodeParams->kind = wire.kind;
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const cudaMemcpy3DParms* pNodeParams) {
  if (pNodeParams != nullptr) {
    if (const auto staged = cr::set_staged_copy_node(nullptr, node, *pNodeParams)) return *staged;
  }
  cr::MemcpyNodeWire wire{};
  if (const cudaError_t rc = cr::pack(pNodeParams, wire, "cudaGraphMemcpyNodeSetParams");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::set_node(cr::Fn::cudaGraphMemcpyNodeSetParams, nullptr, false, node,
                      [&](WireWriter& w) { put_record(w, wire); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void* dst,
                                                                 const void* src, size_t count,
                                                                 cudaMemcpyKind kind) {
  if (const auto staged =
          cr::set_staged_copy_node(nullptr, node, cr::linear_copy(dst, src, count, kind))) {
    return *staged;
  }
  cr::Memcpy1DNodeWire wire{};
  if (const cudaError_t rc =
          cr::pack_1d(dst, src, count, kind, wire, "cudaGraphMemcpyNodeSetParams1D");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::set_node(cr::Fn::cudaGraphMemcpyNodeSetParams1D, nullptr, false, node,
                      [&](WireWriter& w) { put_record(w, wire); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaMemcpy3DParms* pNodeParams) {
  if (pNodeParams != nullptr && hGraphExec != nullptr) {
    if (const auto staged = cr::set_staged_copy_node(hGraphExec, node, *pNodeParams)) {
      return *staged;
    }
  }
  cr::MemcpyNodeWire wire{};
  if (const cudaError_t rc = cr::pack(pNodeParams, wire, "cudaGraphExecMemcpyNodeSetParams");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::set_node(cr::Fn::cudaGraphExecMemcpyNodeSetParams, hGraphExec, true, node,
                      [&](WireWriter& w) { put_record(w, wire); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec,
                                                                     cudaGraphNode_t node,
                                                                     void* dst, const void* src,
                                                                     size_t count,
                                                                     cudaMemcpyKind kind) {
  if (hGraphExec != nullptr) {
    if (const auto staged =
            cr::set_staged_copy_node(hGraphExec, node, cr::linear_copy(dst, src, count, kind))) {
      return *staged;
    }
  }
  cr::Memcpy1DNodeWire wire{};
  if (const cudaError_t rc =
          cr::pack_1d(dst, src, count, kind, wire, "cudaGraphExecMemcpyNodeSetParams1D");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::set_node(cr::Fn::cudaGraphExecMemcpyNodeSetParams1D, hGraphExec, true, node,
                      [&](WireWriter& w) { put_record(w, wire); });
}

// Event record and wait nodes: the event is vetted as the session's.

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* pGraphNode,
                                                              cudaGraph_t graph,
                                                              const cudaGraphNode_t* pDependencies,
                                                              size_t numDependencies,
                                                              cudaEvent_t event) {
  return cr::add_node(cr::Fn::cudaGraphAddEventRecordNode, pGraphNode, graph, pDependencies,
                      numDependencies,
                      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(event)); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* pGraphNode,
                                                            cudaGraph_t graph,
                                                            const cudaGraphNode_t* pDependencies,
                                                            size_t numDependencies,
                                                            cudaEvent_t event) {
  return cr::add_node(cr::Fn::cudaGraphAddEventWaitNode, pGraphNode, graph, pDependencies,
                      numDependencies,
                      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(event)); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node,
                                                                   cudaEvent_t* event_out) {
  return cr::get_handle(cr::Fn::cudaGraphEventRecordNodeGetEvent, node, event_out);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node,
                                                                 cudaEvent_t* event_out) {
  return cr::get_handle(cr::Fn::cudaGraphEventWaitNodeGetEvent, node, event_out);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node,
                                                                   cudaEvent_t event) {
  return cr::set_event(cr::Fn::cudaGraphEventRecordNodeSetEvent, nullptr, false, node, event);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node,
                                                                 cudaEvent_t event) {
  return cr::set_event(cr::Fn::cudaGraphEventWaitNodeSetEvent, nullptr, false, node, event);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t hGraphExec,
                                                                       cudaGraphNode_t hNode,
                                                                       cudaEvent_t event) {
  return cr::set_event(cr::Fn::cudaGraphExecEventRecordNodeSetEvent, hGraphExec, true, hNode,
                       event);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t hGraphExec,
                                                                     cudaGraphNode_t hNode,
                                                                     cudaEvent_t event) {
  return cr::set_event(cr::Fn::cudaGraphExecEventWaitNodeSetEvent, hGraphExec, true, hNode, event);
}

// Child graph nodes: the node owns a clone of the graph; the one it reports is the node's own,
// usable as a graph but not destroyed by the program (it goes with its node).

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* pGraphNode,
                                                             cudaGraph_t graph,
                                                             const cudaGraphNode_t* pDependencies,
                                                             size_t numDependencies,
                                                             cudaGraph_t childGraph) {
  return cr::add_node(cr::Fn::cudaGraphAddChildGraphNode, pGraphNode, graph, pDependencies,
                      numDependencies,
                      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(childGraph)); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node,
                                                                  cudaGraph_t* pGraph) {
  return cr::get_handle(cr::Fn::cudaGraphChildGraphNodeGetGraph, node, pGraph);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t hGraphExec,
                                                                       cudaGraphNode_t node,
                                                                       cudaGraph_t childGraph) {
  return cr::set_node(cr::Fn::cudaGraphExecChildGraphNodeSetParams, hGraphExec, true, node,
                      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(childGraph)); });
}

// Memory allocation and free nodes: the address the runtime placed is recorded as device memory
// (asked remotely for its attributes, as a pool's) until the graph is destroyed.

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* pGraphNode,
                                                           cudaGraph_t graph,
                                                           const cudaGraphNode_t* pDependencies,
                                                           size_t numDependencies,
                                                           cudaMemAllocNodeParams* nodeParams) {
  if (nodeParams == nullptr ||
      cr::bad_access(nodeParams->accessDescs, nodeParams->accessDescCount)) {
    return cr::invalid_value();
  }
  if (pGraphNode == nullptr || (pDependencies == nullptr && numDependencies > 0) ||
      numDependencies > cr::kMaxNodeEdges) {
    return cr::invalid_value();
  }
  cudaGraphNode_t node = nullptr;
  uint64_t address = 0;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaGraphAddMemAllocNode,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(graph));
        w.put<uint32_t>(static_cast<uint32_t>(numDependencies));
        cr::put_nodes(w, pDependencies, numDependencies);
        cr::put_alloc(w, nodeParams->poolProps, nodeParams->accessDescs,
                      nodeParams->accessDescCount, nodeParams->bytesize);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        node = cr::handle_from_wire<cudaGraphNode_t>(r.get<uint64_t>());
        address = r.get<uint64_t>();
      });
  if (result != cudaSuccess) return result;
  *pGraphNode = node;
  nodeParams->dptr = reinterpret_cast<void*>(address);
  cr::note_graph_allocation(graph, nodeParams->dptr, nodeParams->bytesize);
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, cudaMemAllocNodeParams* params_out) {
  if (params_out == nullptr) return cr::invalid_value();
  return cr::remote_sync(
      cr::Fn::cudaGraphMemAllocNodeGetParams,
      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(node)); },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        cudaMemPoolProps props{};
        std::memcpy(&props, r.get_raw(sizeof props).data(), sizeof props);
        const uint32_t n = r.get<uint32_t>();
        if (n > cr::kMaxAccessDescs) {
          raise(gvirtus::ErrorKind::kInvalidInput, "too many access descriptors in a reply");
        }
        std::vector<cudaMemAccessDesc> access(n);
        if (n > 0) {
          std::memcpy(access.data(), r.get_raw(n * sizeof(cudaMemAccessDesc)).data(),
                      n * sizeof(cudaMemAccessDesc));
        }
        const uint64_t bytes = r.get<uint64_t>();
        const uint64_t address = r.get<uint64_t>();
        const auto graph = cr::handle_from_wire<cudaGraph_t>(r.get<uint64_t>());
        std::lock_guard lock(cr::copies_mutex);
        auto& copies = cr::access_copies[node];
        // The same descriptors as last time: the same array (an allocation node never changes).
        const bool same = !copies.empty() && copies.back()->graph == graph &&
                          copies.back()->descriptors.size() == n &&
                          (n == 0 || std::memcmp(copies.back()->descriptors.data(), access.data(),
                                                 n * sizeof(cudaMemAccessDesc)) == 0);
        if (!same) copies.push_back(std::make_unique<cr::AccessCopy>(graph, std::move(access)));
        const auto& kept = copies.back()->descriptors;
        params_out->poolProps = props;
        params_out->accessDescs = kept.empty() ? nullptr : kept.data();
        params_out->accessDescCount = n;
        params_out->bytesize = bytes;
        params_out->dptr = reinterpret_cast<void*>(address);
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* pGraphNode,
                                                          cudaGraph_t graph,
                                                          const cudaGraphNode_t* pDependencies,
                                                          size_t numDependencies, void* dptr) {
  return cr::add_node(cr::Fn::cudaGraphAddMemFreeNode, pGraphNode, graph, pDependencies,
                      numDependencies,
                      [&](WireWriter& w) { w.put<uint64_t>(reinterpret_cast<uint64_t>(dptr)); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node,
                                                                void* dptr_out) {
  if (dptr_out == nullptr) return cr::invalid_value();
  return cr::remote_sync(
      cr::Fn::cudaGraphMemFreeNodeGetParams,
      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(node)); },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        void* const address = reinterpret_cast<void*>(r.get<uint64_t>());
        std::memcpy(dptr_out, &address, sizeof address);
      });
}

// The generic forms: the node type, then the kind's own parameters (host, external semaphore and
// conditional nodes are refused, as their own calls are).

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                                   const cudaGraphNode_t* pDependencies,
                                                   const cudaGraphEdgeData* dependencyData,
                                                   size_t numDependencies,
                                                   cudaGraphNodeParams* nodeParams) {
  if (nodeParams != nullptr && nodeParams->type == cudaGraphNodeTypeMemcpy &&
      dependencyData == nullptr) {
    const cudaMemcpy3DParms& copy = nodeParams->memcpy.copyParams;
    if (const cr::SidesHere here = cr::sides_here(copy); here.any()) {
      return cr::add_staged_copy_node(pGraphNode, graph, pDependencies, numDependencies, copy,
                                      here);
    }
  }
  cr::PackedNodeParams packed;
  if (const cudaError_t rc = cr::pack(nodeParams, packed, "cudaGraphAddNode"); rc != cudaSuccess) {
    return rc;
  }
  if (pGraphNode == nullptr || (pDependencies == nullptr && numDependencies > 0) ||
      numDependencies > cr::kMaxNodeEdges) {
    return cr::invalid_value();
  }
  cudaGraphNode_t node = nullptr;
  uint64_t address = 0;
  std::vector<cudaGraph_t> bodies;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaGraphAddNode,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(graph));
        w.put<uint32_t>(static_cast<uint32_t>(numDependencies));
        cr::put_nodes(w, pDependencies, numDependencies);
        w.put<uint8_t>(dependencyData != nullptr);
        if (dependencyData != nullptr && numDependencies > 0) {
          w.put_raw(dependencyData, numDependencies * sizeof(cudaGraphEdgeData));
        }
        cr::put_node_params(w, packed);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: the outputs stay as they were
        node = cr::handle_from_wire<cudaGraphNode_t>(r.get<uint64_t>());
        if (packed.type == cudaGraphNodeTypeMemAlloc) address = r.get<uint64_t>();
        if (packed.type == cudaGraphNodeTypeConditional) {
          bodies = gvirtus::read_conditional_bodies<cudaGraph_t>(r, packed.conditional_size);
        }
      });
  if (result != cudaSuccess) return result;
  *pGraphNode = node;
  if (packed.type == cudaGraphNodeTypeConditional) {
    nodeParams->conditional.phGraph_out =
        cr::keep_conditional_bodies(node, graph, std::move(bodies));
  }
  if (packed.type == cudaGraphNodeTypeMemAlloc) {
    nodeParams->alloc.dptr = reinterpret_cast<void*>(address);
    cr::note_graph_allocation(graph, nodeParams->alloc.dptr, nodeParams->alloc.bytesize);
  }
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node,
                                                         cudaGraphNodeParams* nodeParams) {
  if (nodeParams != nullptr && nodeParams->type == cudaGraphNodeTypeMemcpy) {
    if (const auto staged =
            cr::set_staged_copy_node(nullptr, node, nodeParams->memcpy.copyParams)) {
      return *staged;
    }
  }
  cr::PackedNodeParams packed;
  if (const cudaError_t rc = cr::pack(nodeParams, packed, "cudaGraphNodeSetParams");
      rc != cudaSuccess) {
    return rc;
  }
  const cudaError_t result = cr::set_node(cr::Fn::cudaGraphNodeSetParams, nullptr, false, node,
                                          [&](WireWriter& w) { cr::put_node_params(w, packed); });
  if (result == cudaSuccess) cr::drop_copies(node);
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec,
                                                             cudaGraphNode_t node,
                                                             cudaGraphNodeParams* nodeParams) {
  if (nodeParams != nullptr && nodeParams->type == cudaGraphNodeTypeMemcpy &&
      graphExec != nullptr) {
    if (const auto staged =
            cr::set_staged_copy_node(graphExec, node, nodeParams->memcpy.copyParams)) {
      return *staged;
    }
  }
  cr::PackedNodeParams packed;
  if (const cudaError_t rc = cr::pack(nodeParams, packed, "cudaGraphExecNodeSetParams");
      rc != cudaSuccess) {
    return rc;
  }
  return cr::set_node(cr::Fn::cudaGraphExecNodeSetParams, graphExec, true, node,
                      [&](WireWriter& w) { cr::put_node_params(w, packed); });
}

// Host nodes: the function travels as a token (host_functions.h); a failed call forgets it.

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* pGraphNode,
                                                       cudaGraph_t graph,
                                                       const cudaGraphNode_t* pDependencies,
                                                       size_t numDependencies,
                                                       const cudaHostNodeParams* pNodeParams) {
  if (pNodeParams == nullptr || pNodeParams->fn == nullptr || pGraphNode == nullptr) {
    return cr::invalid_value();
  }
  uint64_t token = 0;
  if (const cudaError_t r = cr::host_function_token(pNodeParams->fn, pNodeParams->userData, token);
      r != cudaSuccess) {
    return r;
  }
  const cudaError_t added =
      cr::add_node(cr::Fn::cudaGraphAddHostNode, pGraphNode, graph, pDependencies, numDependencies,
                   [&](WireWriter& w) { w.put<uint64_t>(token); });
  if (added != cudaSuccess) cr::drop_host_function(token);
  return added;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node,
                                                             cudaHostNodeParams* pNodeParams) {
  if (pNodeParams == nullptr) return cr::invalid_value();
  uint64_t token = 0;
  const cudaError_t got = cr::remote_sync(
      cr::Fn::cudaGraphHostNodeGetParams,
      [&](WireWriter& w) { w.put<uint64_t>(cr::wire_handle(node)); },
      [&](WireReader& r) {
        if (r.remaining() != 0) token = r.get<uint64_t>();
      });
  if (got != cudaSuccess) return got;
  cudaHostFn_t fn = nullptr;
  void* data = nullptr;
  // Every host node of the session names a function of this process's, unless it was made
  // before a fork (the child's session has no such node).
  if (!cr::host_function_of(token, fn, data)) return cr::record_local_error(cudaErrorInvalidValue);
  pNodeParams->fn = fn;
  pNodeParams->userData = data;
  return cudaSuccess;
}

namespace {

cudaError_t set_host_node(cr::Fn fn, cudaGraphExec_t exec, cudaGraphNode_t node,
                          const cudaHostNodeParams* params) {
  if (params == nullptr || params->fn == nullptr) return cr::invalid_value();
  uint64_t token = 0;
  if (const cudaError_t r = cr::host_function_token(params->fn, params->userData, token);
      r != cudaSuccess) {
    return r;
  }
  const bool exec_form = fn == cr::Fn::cudaGraphExecHostNodeSetParams;
  const cudaError_t set =
      cr::set_node(fn, exec, exec_form, node, [&](WireWriter& w) { w.put<uint64_t>(token); });
  if (set != cudaSuccess) cr::drop_host_function(token);
  return set;
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGraphHostNodeSetParams(cudaGraphNode_t node, const cudaHostNodeParams* pNodeParams) {
  return set_host_node(cr::Fn::cudaGraphHostNodeSetParams, nullptr, node, pNodeParams);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecHostNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaHostNodeParams* pNodeParams) {
  return set_host_node(cr::Fn::cudaGraphExecHostNodeSetParams, hGraphExec, node, pNodeParams);
}

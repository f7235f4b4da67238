// Graph memory nodes on the simulated device: an allocation node allocates when it is added (the
// driver fixes the address then too: "the allocation's address remains fixed across
// instantiations and launches") from the device's memory, and writes its address into the
// caller's parameters; a free node names an allocation a node made. Neither does anything at
// launch: the memory is there from the allocation node's adding until cuMemFree frees it or the
// graph whose node allocated it is destroyed while no executable graph was instantiated from it
// (State::graph_allocations), whether or not a free node names it - the simulated device keeps
// no per-launch lifetime.
//
// The driver's rules for graphs with memory nodes hold: their nodes and edges cannot be removed,
// they cannot be cloned or embedded in a child node (graph_shape.cpp, graphs.cpp,
// graph_nodes.cpp), an allocation is freed by one free node only, and memory nodes go only into
// graphs of one's own (not a child node's).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph_node_params.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

// A graph made by cuGraphCreate, a capture or a clone: not one a child node embeds.
sim::Graph* own_graph(sim::State& s, CUgraph handle) {
  const auto found = s.graphs.find(handle);
  return found != s.graphs.end() ? found->second.get() : nullptr;
}

CUresult check_allocation(const sim::State& s, const CUDA_MEM_ALLOC_NODE_PARAMS& p) {
  const CUmemPoolProps& pool = p.poolProps;
  if (pool.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      pool.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      !sim::valid_device(s, pool.location.id) || pool.handleTypes != CU_MEM_HANDLE_TYPE_NONE ||
      p.bytesize == 0 || (p.accessDescCount != 0 && p.accessDescs == nullptr) ||
      p.accessDescCount > s.devices.size()) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                         const CUgraphNode* dependencies,
                                                         size_t numDependencies,
                                                         CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  return sim::guarded([&](sim::State& s) {
    if (nodeParams == nullptr || phGraphNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (sim::find_graph(s, hGraph) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    sim::Graph* graph = own_graph(s, hGraph);
    if (graph == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    if (const CUresult r = check_allocation(s, *nodeParams); r != CUDA_SUCCESS) return r;
    CUdeviceptr address = 0;
    if (const CUresult r = sim::allocate_memory(s, nodeParams->bytesize, &address);
        r != CUDA_SUCCESS) {
      return r;
    }
    sim::AllocNode node{*nodeParams, std::vector<CUmemAccessDesc>(
                                         nodeParams->accessDescs,
                                         nodeParams->accessDescs + nodeParams->accessDescCount)};
    node.params.accessDescs = nullptr;  // the node's own copy is `access`
    node.params.dptr = address;
    if (const CUresult r =
            sim::add_node(s, *graph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEM_ALLOC,
                          std::move(node), phGraphNode);
        r != CUDA_SUCCESS) {
      sim::free_memory(s, address);
      return r;
    }
    s.graph_allocations[address] = {graph->id, false};
    nodeParams->dptr = address;
    return CUDA_SUCCESS;
  });
}

// poolProps and accessDescs as given; accessDescs points at the node's own copy, valid while the
// node lives.
GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = sim::node_of_type(s, hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    if (node == nullptr || params_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto& alloc = std::get<sim::AllocNode>(node->params);
    *params_out = alloc.params;
    params_out->accessDescs = alloc.access.empty() ? nullptr : alloc.access.data();
    return CUDA_SUCCESS;
  });
}

// Refused (CUDA_ERROR_INVALID_VALUE) for an address no allocation node returned, or one a free
// node already frees, in this graph or another.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                        const CUgraphNode* dependencies,
                                                        size_t numDependencies, CUdeviceptr dptr) {
  return sim::guarded([&](sim::State& s) {
    if (phGraphNode == nullptr || sim::find_graph(s, hGraph) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    sim::Graph* graph = own_graph(s, hGraph);
    if (graph == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    const auto allocation = s.graph_allocations.find(dptr);
    if (allocation == s.graph_allocations.end() || allocation->second.freed_by_node) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r =
            sim::add_node(s, *graph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEM_FREE,
                          sim::FreeNode{dptr}, phGraphNode);
        r != CUDA_SUCCESS) {
      return r;
    }
    allocation->second.freed_by_node = true;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode,
                                                              CUdeviceptr* dptr_out) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = sim::node_of_type(s, hNode, CU_GRAPH_NODE_TYPE_MEM_FREE);
    if (node == nullptr || dptr_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *dptr_out = std::get<sim::FreeNode>(node->params).dptr;
    return CUDA_SUCCESS;
  });
}

namespace gvirtus::simulated {

void release_graph_memory(State& s, const Graph& graph) {
  for (const auto& node : graph.nodes) {
    const auto* free_node = std::get_if<FreeNode>(&node->params);
    if (free_node == nullptr) continue;
    const auto allocation = s.graph_allocations.find(free_node->dptr);
    if (allocation != s.graph_allocations.end()) allocation->second.freed_by_node = false;
  }
  // An executable graph instantiated from it places its memory at each launch, where it stays
  // until freed: kept then, its graph gone (graph id 0), freed only by cuMemFree.
  const bool instantiated =
      std::any_of(s.executables.begin(), s.executables.end(),
                  [&](const auto& e) { return e.second->source_id == graph.id; });
  std::vector<uintptr_t> owned;
  for (auto& [address, allocation] : s.graph_allocations) {
    if (allocation.graph_id != graph.id) continue;
    if (instantiated) {
      allocation.graph_id = 0;
    } else {
      owned.push_back(address);
    }
  }
  for (uintptr_t address : owned) free_memory(s, address);  // which forgets it as the graph's
}

}  // namespace gvirtus::simulated

namespace {

// The bytes the device's graph allocations hold now, the high mark raised to them.
uint64_t graph_memory_now(sim::State& s) {
  uint64_t bytes = 0;
  for (const auto& [address, allocation] : s.graph_allocations) {
    if (const auto it = s.allocation_bytes.find(address); it != s.allocation_bytes.end()) {
      bytes += it->second;
    }
  }
  s.graph_memory_high = std::max(s.graph_memory_high, bytes);
  return bytes;
}

// An attribute call of `device`'s graph memory, `value` its 8 bytes: body(state, bytes held now,
// the value as a uint64_t), after the checks both calls make.
template <typename Body>
CUresult with_graph_memory(CUdevice device, void* value, Body body) {
  return sim::guarded([&](sim::State& s) {
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::valid_device(s, device)) return CUDA_ERROR_INVALID_DEVICE;
    return body(s, graph_memory_now(s), *static_cast<uint64_t*>(value));
  });
}

}  // namespace

// Graph memory's use: what the graphs' allocation nodes hold (the simulated device reserves what
// it uses, so reserved and used agree), and the most it has held.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice device,
                                                               CUgraphMem_attribute attr,
                                                               void* value) {
  return with_graph_memory(device, value, [&](sim::State& s, uint64_t now, uint64_t& answer) {
    switch (attr) {
      case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
      case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
        answer = now;
        return CUDA_SUCCESS;
      case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
      case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
        answer = s.graph_memory_high;
        return CUDA_SUCCESS;
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
  });
}

// Only a high mark can be set, and only to 0 (it becomes what is held now), as the driver allows.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceSetGraphMemAttribute(CUdevice device,
                                                               CUgraphMem_attribute attr,
                                                               void* value) {
  return with_graph_memory(device, value, [&](sim::State& s, uint64_t now, uint64_t& requested) {
    if ((attr != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) ||
        requested != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    s.graph_memory_high = now;
    return CUDA_SUCCESS;
  });
}

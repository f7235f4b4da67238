// An executable graph's launch on the simulated device: its nodes in a topological order (every
// edge respected, ties in insertion order), each done at once as streams are here: a kernel node's
// launch recorded on the launch's stream, marked "graph":true (launches.cpp); a memset or memcpy
// node performed on the device's memory; a host node's function run (on the launching thread,
// under the device's lock); an event record node's event marked recorded; a child
// graph node's graph run the same way, and a conditional node's bodies as its handle's value
// says (graph_conditionals.cpp); a batch memory operation node's operations done in order. Disabled
// nodes are skipped; event waits, empty nodes and memory nodes (their memory is there from their
// adding: graph_memory_nodes.cpp) have nothing to do. A node that fails stops the launch there, its
// result the launch's, as a device fault would.
//
// On a capturing stream the kernel nodes' launches are captured as any launch; work the
// simulated device cannot capture (memsets, copies, event records, host nodes) refuses the launch
// first (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), as not_captured() refuses it on a stream.
#include <cstring>
#include <type_traits>

#include "graph_node_params.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

bool uncapturable(const sim::Graph& graph) {
  for (const auto& node : graph.nodes) {
    if (!node->enabled) continue;
    if (node->type == CU_GRAPH_NODE_TYPE_MEMSET || node->type == CU_GRAPH_NODE_TYPE_MEMCPY ||
        node->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD || node->type == CU_GRAPH_NODE_TYPE_HOST ||
        node->type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP) {
      return true;
    }
    const auto* child = std::get_if<sim::ChildNode>(&node->params);
    if (child != nullptr && uncapturable(*child->graph)) return true;
    if (const auto* conditional = std::get_if<sim::ConditionalNode>(&node->params)) {
      for (const auto& body : conditional->bodies) {
        if (uncapturable(*body)) return true;
      }
    }
  }
  return false;
}

template <typename T>
void fill(std::byte* at, const CUDA_MEMSET_NODE_PARAMS& m) {
  const T value = static_cast<T>(m.value);
  for (size_t row = 0; row < m.height; ++row) {
    std::byte* start = at + row * m.pitch;
    for (size_t i = 0; i < m.width; ++i) std::memcpy(start + i * sizeof(T), &value, sizeof(T));
  }
}

CUresult memset(sim::State& s, const CUDA_MEMSET_NODE_PARAMS& m) {
  std::byte* at = sim::memset_target(s, m);  // its memory may have been freed since it was set
  if (at == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (m.elementSize) {
    case 1:
      fill<uint8_t>(at, m);
      break;
    case 2:
      fill<uint16_t>(at, m);
      break;
    default:
      fill<uint32_t>(at, m);
  }
  return CUDA_SUCCESS;
}

CUresult run(sim::State& s, const sim::Graph& graph, CUstream stream) {
  for (const sim::Node* node : sim::topological_order(graph)) {
    if (!node->enabled) continue;
    const CUresult r = std::visit(
        [&](const auto& p) -> CUresult {
          using Params = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<Params, sim::KernelNode>) {
            return sim::record_launch(s, stream, p.launch, true);
          } else if constexpr (std::is_same_v<Params, sim::MemcpyNode>) {
            return sim::copy_box(s, p.copy);
          } else if constexpr (std::is_same_v<Params, sim::MemsetNode>) {
            return memset(s, p.memset);
          } else if constexpr (std::is_same_v<Params, sim::ChildNode>) {
            return run(s, *p.graph, stream);
          } else if constexpr (std::is_same_v<Params, sim::MemOpsNode>) {
            for (const CUstreamBatchMemOpParams& operation : p.operations) {
              if (const CUresult r = sim::mem_op(s, stream, operation); r != CUDA_SUCCESS) return r;
            }
            return CUDA_SUCCESS;
          } else if constexpr (std::is_same_v<Params, sim::ConditionalNode>) {
            for (const sim::Graph* body : sim::conditional_bodies_to_run(s, p)) {
              if (const CUresult r = run(s, *body, stream); r != CUDA_SUCCESS) return r;
            }
            return CUDA_SUCCESS;
          } else if constexpr (std::is_same_v<Params, sim::HostNode>) {
            p.fn(p.data);  // under the state's lock: the device does nothing else meanwhile
            return CUDA_SUCCESS;
          } else if constexpr (std::is_same_v<Params, sim::EventNode>) {
            if (node->type != CU_GRAPH_NODE_TYPE_EVENT_RECORD) return CUDA_SUCCESS;  // a wait
            const auto event = s.events.find(p.event);
            if (event == s.events.end()) return CUDA_ERROR_INVALID_HANDLE;  // destroyed since
            event->second->recorded = true;
            return CUDA_SUCCESS;
          } else {
            return CUDA_SUCCESS;  // empty and memory nodes
          }
        },
        node->params);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    const auto executable = s.executables.find(hGraphExec);
    if (executable == s.executables.end()) return CUDA_ERROR_INVALID_HANDLE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const sim::Graph& graph = *executable->second->graph;
    if (uncapturable(graph)) {
      if (const CUresult r = sim::not_captured(s, hStream); r != CUDA_SUCCESS) return r;
    }
    return run(s, graph, hStream);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    if (s.executables.count(hGraphExec) == 0 || !sim::known_stream(s, hStream)) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    return CUDA_SUCCESS;
  });
}

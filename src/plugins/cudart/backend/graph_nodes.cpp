// The session's graph nodes and child graphs (graph_nodes.h).
#include "plugins/cudart/backend/graph_nodes.h"

#include <mutex>
#include <unordered_map>

#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {
namespace {

struct State {
  std::mutex mutex;
  std::unordered_map<cudaGraphNode_t, cudaGraph_t> nodes;  // node -> its graph
  std::unordered_map<cudaGraph_t, cudaGraphNode_t> owned;  // child graph -> its node
};

State& state() {
  static State& s = *new State;  // never destroyed: a worker's exit may still run calls
  return s;
}

void release_graph_handle(cudaGraph_t graph) {
  services::session_services().handles.release(static_cast<uint16_t>(HandleKind::kGraph), graph);
}

// With the lock held: the nodes of `graph` and, recursively, of the graphs they owned. Each
// child graph forgotten is released from the handle table too.
void forget_graph_locked(State& s, cudaGraph_t graph) {
  forget_graph_allocations(graph);
  std::vector<cudaGraph_t> children;
  for (auto it = s.nodes.begin(); it != s.nodes.end();) {
    if (it->second != graph) {
      ++it;
      continue;
    }
    for (const auto& [child, owner] : s.owned) {
      if (owner == it->first) children.push_back(child);
    }
    it = s.nodes.erase(it);
  }
  for (cudaGraph_t child : children) {
    s.owned.erase(child);
    release_graph_handle(child);
    forget_graph_locked(s, child);
  }
}

}  // namespace

void adopt_node(cudaGraphNode_t node, cudaGraph_t graph) {
  if (node == nullptr) return;
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.nodes[node] = graph;
}

void adopt_nodes(const cudaGraphNode_t* nodes, size_t n, cudaGraph_t graph) {
  for (size_t i = 0; i < n; ++i) adopt_node(nodes[i], graph);
}

cudaError_t vet_node(cudaGraphNode_t node) {
  if (node == nullptr) return cudaSuccess;
  const cudaGraph_t graph = graph_of(node);
  // A node whose graph another plugin of the session destroyed is refused with it.
  if (graph != nullptr && vet(graph) == cudaSuccess) return cudaSuccess;
  return static_cast<cudaError_t>(services::refuse(
      cudaErrorInvalidResourceHandle, "cudart", "graph node", node,
      "not a node of a graph this session holds (never listed, destroyed, or its graph was)"));
}

cudaError_t vet_nodes(const cudaGraphNode_t* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (const cudaError_t result = vet_node(nodes[i]); result != cudaSuccess) return result;
  }
  return cudaSuccess;
}

cudaGraph_t graph_of(cudaGraphNode_t node) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto it = s.nodes.find(node);
  return it != s.nodes.end() ? it->second : nullptr;
}

void adopt_child_graph(cudaGraph_t child, cudaGraphNode_t owner) {
  if (child == nullptr) return;
  {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.owned[child] = owner;
  }
  adopt(child);
}

bool is_child_graph(cudaGraph_t graph) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.owned.contains(graph);
}

void forget_node(cudaGraphNode_t node) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.nodes.erase(node);
  for (auto it = s.owned.begin(); it != s.owned.end(); ++it) {
    if (it->second != node) continue;
    const cudaGraph_t child = it->first;
    s.owned.erase(it);
    release_graph_handle(child);
    forget_graph_locked(s, child);
    break;
  }
}

void forget_graph_nodes(cudaGraph_t graph) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  forget_graph_locked(s, graph);
}

void forget_all_nodes() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  for (const auto& [node, graph] : s.nodes) forget_graph_allocations(graph);
  s.nodes.clear();
  s.owned.clear();
}

}  // namespace gvirtus::cudart

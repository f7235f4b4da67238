// The session's graph nodes and child graphs (graph_node_registry.h).
#include "backend/services/graph_node_registry.h"

#include <vector>

namespace gvirtus::services {

void GraphNodeRegistry::adopt(Node node, Graph graph) {
  if (node == nullptr) return;
  std::lock_guard lock(mutex_);
  nodes_[node] = graph;
}

GraphNodeRegistry::Graph GraphNodeRegistry::graph_of(Node node) const {
  std::lock_guard lock(mutex_);
  const auto it = nodes_.find(node);
  return it != nodes_.end() ? it->second : nullptr;
}

bool GraphNodeRegistry::may_name(Node node, const std::function<bool(Graph)>& graph_held) const {
  if (node == nullptr) return true;
  const Graph graph = graph_of(node);
  // A node whose graph another plugin of the session destroyed is refused with it.
  return graph != nullptr && graph_held(graph);
}

void GraphNodeRegistry::adopt_child(Graph child, Node owner) {
  if (child == nullptr) return;
  std::lock_guard lock(mutex_);
  owned_[child] = owner;
}

bool GraphNodeRegistry::is_child(Graph graph) const {
  std::lock_guard lock(mutex_);
  return owned_.contains(graph);
}

// With the lock held: a child graph goes with its node, its nodes with it.
void GraphNodeRegistry::forget_child_locked(Graph child) {
  owned_.erase(child);
  forgotten_(child, Gone::kChildGraph);
  forget_graph_locked(child);
}

// With the lock held: the nodes of `graph` and, recursively, of the graphs they owned.
void GraphNodeRegistry::forget_graph_locked(Graph graph) {
  forgotten_(graph, Gone::kOwnGraph);
  std::vector<Graph> children;
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (it->second != graph) {
      ++it;
      continue;
    }
    for (const auto& [child, owner] : owned_) {
      if (owner == it->first) children.push_back(child);
    }
    it = nodes_.erase(it);
  }
  for (Graph child : children) forget_child_locked(child);
}

void GraphNodeRegistry::forget_node(Node node) {
  std::lock_guard lock(mutex_);
  nodes_.erase(node);
  // A child graph node owns one graph, a conditional node one per body.
  std::vector<Graph> children;
  for (const auto& [child, owner] : owned_) {
    if (owner == node) children.push_back(child);
  }
  for (Graph child : children) forget_child_locked(child);
}

void GraphNodeRegistry::forget_graph(Graph graph) {
  std::lock_guard lock(mutex_);
  forget_graph_locked(graph);
}

void GraphNodeRegistry::clear() {
  std::lock_guard lock(mutex_);
  for (const auto& [node, graph] : nodes_) forgotten_(graph, Gone::kOwnGraph);
  nodes_.clear();
  owned_.clear();
}

}  // namespace gvirtus::services

// A stub's staged copy nodes (common/staged_copies.h: a copy node with a side in the program's own
// memory, which the backend holds as a child graph node of the stub's host function and a copy of
// a staging block, or of the host function alone when both sides are there): what the program gave
// each, so that the stub answers for the node as the copy node it is (its type, its parameters), in
// the graph it was added to and in that graph's clones, until the node or its graph is destroyed.
// Header-only: each stub keeps one over its own handle and parameter types.
//
// Thread affinity: locked.
#pragma once

#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/staged_copies.h"

namespace gvirtus::staging {

template <typename Node, typename Graph, typename Params>
class StagedNodes {
 public:
  struct Staged {
    Graph graph;
    Params params;  // as the program gave them
    Sides here;     // which of the copy's sides are the program's memory (one or both)
  };

  void add(Node node, Graph graph, const Params& params, Sides here) {
    std::lock_guard lock(mutex_);
    nodes_[node] = Staged{graph, params, here};
  }
  std::optional<Staged> find(Node node) const {
    std::lock_guard lock(mutex_);
    const auto it = nodes_.find(node);
    if (it == nodes_.end()) return std::nullopt;
    return it->second;
  }
  bool contains(Node node) const {
    std::lock_guard lock(mutex_);
    return nodes_.contains(node);
  }
  void set_params(Node node, const Params& params) {
    std::lock_guard lock(mutex_);
    if (const auto it = nodes_.find(node); it != nodes_.end()) it->second.params = params;
  }
  // A clone of `original`: each staged node's counterpart there, found by `find_in_clone(node,
  // &cloned)` (the library's status; 0 when found), is staged too.
  template <typename FindInClone>
  void cloned(Graph original, Graph clone, FindInClone&& find_in_clone) {
    std::vector<std::pair<Node, Staged>> of_original;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [node, staged] : nodes_) {
        if (staged.graph == original) of_original.emplace_back(node, staged);
      }
    }
    for (auto& [node, staged] : of_original) {
      Node counterpart{};
      if (find_in_clone(node, &counterpart) != 0) continue;
      staged.graph = clone;
      std::lock_guard lock(mutex_);
      nodes_[counterpart] = staged;
    }
  }
  void forget_node(Node node) {
    std::lock_guard lock(mutex_);
    nodes_.erase(node);
  }
  void forget_graph(Graph graph) {
    std::lock_guard lock(mutex_);
    std::erase_if(nodes_, [&](const auto& entry) { return entry.second.graph == graph; });
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<Node, Staged> nodes_;
};

}  // namespace gvirtus::staging

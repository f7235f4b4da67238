// The bodies of a stub's conditional graph nodes (cuGraphAddNode's and cudaGraphAddNode's
// conditional kind): the graphs the backend's driver made with each node, in the array the node's
// parameters point at - natively the driver's own, valid for the node's life. A stub keeps them
// until the node is destroyed or its graph is (and, with it, the conditional nodes inside its
// bodies, at any depth).
//
// Thread affinity: locked.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "common/wire.h"

namespace gvirtus {

// The bodies a conditional node's add replied with (u32 n, then n u64 graphs): none after a
// failure, else the node's `size`; any other count is a reply not to be trusted.
template <typename Graph>
std::vector<Graph> read_conditional_bodies(WireReader& r, uint32_t size) {
  const auto count = r.get<uint32_t>();
  if (count != 0 && count != size) {
    raise(ErrorKind::kInvalidInput, "a conditional node came back with " + std::to_string(count) +
                                        " bodies, not " + std::to_string(size));
  }
  std::vector<Graph> bodies(count);
  for (Graph& body : bodies)
    body = reinterpret_cast<Graph>(static_cast<uintptr_t>(r.get<uint64_t>()));
  return bodies;
}

template <typename Node, typename Graph>
class ConditionalBodies {
 public:
  // Keeps `bodies` for `node` of `graph`; the array the caller hands out.
  Graph* keep(Node node, Graph graph, std::vector<Graph> bodies) {
    auto kept = std::make_unique<Kept>(Kept{graph, std::move(bodies)});
    Graph* array = kept->bodies.data();
    std::lock_guard lock(mutex_);
    nodes_[node] = std::move(kept);
    return array;
  }
  void node_gone(Node node) {
    std::lock_guard lock(mutex_);
    const auto it = nodes_.find(node);
    if (it == nodes_.end()) return;
    const std::vector<Graph> bodies = std::move(it->second->bodies);
    nodes_.erase(it);
    for (const Graph body : bodies) graph_gone_locked(body);
  }
  void graph_gone(Graph graph) {
    std::lock_guard lock(mutex_);
    graph_gone_locked(graph);
  }

 private:
  struct Kept {
    Graph graph;
    std::vector<Graph> bodies;
  };
  void graph_gone_locked(Graph graph) {
    std::vector<Graph> bodies;
    std::erase_if(nodes_, [&](const auto& entry) {
      if (entry.second->graph != graph) return false;
      bodies.insert(bodies.end(), entry.second->bodies.begin(), entry.second->bodies.end());
      return true;
    });
    for (const Graph body : bodies) graph_gone_locked(body);
  }

  std::mutex mutex_;
  std::unordered_map<Node, std::unique_ptr<Kept>> nodes_;
};

}  // namespace gvirtus

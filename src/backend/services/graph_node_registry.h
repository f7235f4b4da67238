// The graph nodes a backend session may name, and the graphs that child graph nodes own (a shared
// backend service: the cudart and cuda plugins each keep one, over the same kind of object).
//
// A node is the library's pointer into its graph: a made-up or stale one crashes the worker. So
// the session keeps every node the library handed it - a node added, or listed by a query of a
// graph of the session (its nodes, dependencies, edges, a node found in a clone) - with the graph
// it lies in, and forgets it when it is destroyed or its graph is. A node is vetted together with
// its graph, which must still be the session's (the plugin's own check, given to vet()).
//
// A child graph node owns a graph (a conditional node one per body): the session may use it as a
// graph but not destroy it, and it goes with its node. The plugin learns of each graph forgotten
// this way (and of each graph whose nodes are forgotten) through `forgotten`, to release its handle
// or its allocations.
//
// Thread affinity: locked (a session's executors run on several threads).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

namespace gvirtus::services {

class GraphNodeRegistry {
 public:
  using Graph = const void*;
  using Node = const void*;
  // What becomes of a graph: kOwnGraph, whose nodes are forgotten (its own destruction or a
  // reset), or kChildGraph, a child node's graph forgotten with its node (release its handle).
  enum class Gone { kOwnGraph, kChildGraph };
  using Forgotten = std::function<void(Graph, Gone)>;

  explicit GraphNodeRegistry(Forgotten forgotten) : forgotten_(std::move(forgotten)) {}

  // Records `node` as one of `graph`'s (a node the library handed out: it may be known already).
  // A null node is not recorded.
  void adopt(Node node, Graph graph);
  // The graph `node` lies in; null when the session does not hold it.
  Graph graph_of(Node node) const;
  // Whether the session may name `node`: null always may (the library judges it); otherwise it
  // must be known and `graph_held` must say its graph is still the session's.
  bool may_name(Node node, const std::function<bool(Graph)>& graph_held) const;

  // Records `child`, the graph the child graph node `owner` owns.
  void adopt_child(Graph child, Node owner);
  bool is_child(Graph graph) const;

  // Forgets `node` (the library destroyed it), and the graph it owned with that graph's nodes.
  void forget_node(Node node);
  // Forgets `graph`'s nodes and the child graphs they owned, recursively.
  void forget_graph(Graph graph);
  // Forgets everything (a new session).
  void clear();

 private:
  void forget_graph_locked(Graph graph);
  void forget_child_locked(Graph child);

  Forgotten forgotten_;
  mutable std::mutex mutex_;
  std::unordered_map<Node, Graph> nodes_;  // node -> its graph
  std::unordered_map<Graph, Node> owned_;  // child graph -> its node
};

}  // namespace gvirtus::services

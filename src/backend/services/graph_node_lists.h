// Lists of graph nodes as a capture's requests carry them, for both plugins' capture calls
// (cuda's and cudart's backend/capture_dependencies.cpp): the list read off the wire, bounded,
// and the check that every node named lies in a graph whose nodes the library lists.
//   wire: u32 n (at most `max`), n u64 nodes, u8 edge data given, then n edge records when given.
// A malformed list throws Error{kInvalidInput}, which ends the session.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/error.h"
#include "common/wire.h"

namespace gvirtus::services {

template <typename Node, typename Edge>
struct NodeList {
  std::vector<Node> nodes;
  std::vector<Edge> edges;  // empty when none were given
};

template <typename Node, typename Edge>
NodeList<Node, Edge> get_node_list(WireReader& in, uint64_t max) {
  NodeList<Node, Edge> list;
  const auto n = in.get<uint32_t>();
  // Bounded, and the bytes must be there before anything is allocated.
  if (n > max || in.remaining() < uint64_t{n} * sizeof(uint64_t)) {
    raise(ErrorKind::kInvalidInput, "a capture's list of " + std::to_string(n) + " nodes");
  }
  list.nodes.resize(n);
  for (auto& node : list.nodes) node = reinterpret_cast<Node>(in.get<uint64_t>());
  if (in.get_bool() && n > 0) {
    list.edges.resize(n);
    std::memcpy(list.edges.data(), in.get_raw(n * sizeof(Edge)).data(), n * sizeof(Edge));
  }
  return list;
}

// Whether every node of `wanted` lies in the graph whose nodes `list(array, count)` gives as the
// library's graph-get-nodes call does (a null array: the count only): `success`, else `invalid`
// (a node of another graph), `too_many` (a graph of more than `max` nodes), or the library's
// failure.
template <typename Status, typename Node, typename List>
Status nodes_in_graph(const std::vector<Node>& wanted, List list, uint64_t max, Status success,
                      Status invalid, Status too_many) {
  if (wanted.empty()) return success;
  size_t count = 0;
  Status r = list(nullptr, &count);
  if (r != success) return r;
  if (count > max) return too_many;
  std::vector<Node> present(count);
  if (count > 0 && (r = list(present.data(), &count)) != success) return r;
  const std::unordered_set<Node> in_graph(present.begin(),
                                          present.begin() + std::min(count, present.size()));
  for (Node node : wanted) {
    if (!in_graph.contains(node)) return invalid;
  }
  return success;
}

}  // namespace gvirtus::services

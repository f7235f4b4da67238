// The simulated device's graph model (graph_model.h): graphs and nodes registered for their
// lives, nodes added with their dependencies, graphs copied and ordered.
#include "graph_model.h"

#include <algorithm>
#include <set>
#include <type_traits>
#include <utility>

#include "state.h"

namespace gvirtus::simulated {

// Graphs and nodes are made and destroyed under the state's lock only (every export runs in
// guarded()), so they register themselves in it.
Node::Node(Graph& owner, CUgraphNodeType node_type, NodeParams node_params)
    : graph(owner),
      id(state().next_graph_object++),
      type(node_type),
      params(std::move(node_params)) {
  state().live_nodes.insert(this);
}

Node::~Node() {
  state().live_nodes.erase(this);
}

Graph::Graph() : id(state().next_graph_object++) {
  state().live_graphs.insert(this);
}

Graph::~Graph() {
  nodes.clear();  // before the graph stops being live: a child node's graph goes with it
  release_user_objects(user_objects);
  state().live_graphs.erase(this);
}

CUgraph handle_of(Graph& graph) {
  return reinterpret_cast<CUgraph>(&graph);
}

CUgraphNode handle_of(Node& node) {
  return reinterpret_cast<CUgraphNode>(&node);
}

Graph* find_graph(State& s, CUgraph handle) {
  const auto* graph = reinterpret_cast<const Graph*>(handle);
  return s.live_graphs.count(graph) != 0 ? const_cast<Graph*>(graph) : nullptr;
}

Node* find_node(State& s, CUgraphNode handle) {
  const auto* node = reinterpret_cast<const Node*>(handle);
  return s.live_nodes.count(node) != 0 ? const_cast<Node*>(node) : nullptr;
}

Node* copy_of(const Graph& copy, const Node& original) {
  const auto found = copy.copies.find(&original);
  if (found == copy.copies.end() || found->second.original_id != original.id) return nullptr;
  return found->second.copy;
}

CUresult add_node(State& s, Graph& graph, const CUgraphNode* dependencies, size_t count,
                  CUgraphNodeType type, NodeParams params, CUgraphNode* out) {
  if (out == nullptr || (count != 0 && dependencies == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<Node*> from;
  for (size_t i = 0; i < count; ++i) {
    Node* dependency = find_node(s, dependencies[i]);
    if (dependency == nullptr || &dependency->graph != &graph ||
        std::find(from.begin(), from.end(), dependency) != from.end()) {
      return CUDA_ERROR_INVALID_VALUE;  // unknown, another graph's, or named twice
    }
    from.push_back(dependency);
  }
  auto node = std::make_unique<Node>(graph, type, std::move(params));
  for (Node* dependency : from) graph.edges.push_back({dependency, node.get(), CUgraphEdgeData{}});
  *out = handle_of(*node);
  graph.nodes.push_back(std::move(node));
  return CUDA_SUCCESS;
}

NodeParams copy_params(const NodeParams& params) {
  return std::visit(
      [](const auto& p) -> NodeParams {
        if constexpr (std::is_same_v<std::decay_t<decltype(p)>, ChildNode>) {
          return ChildNode{clone_graph(*p.graph)};
        } else if constexpr (std::is_same_v<std::decay_t<decltype(p)>, ConditionalNode>) {
          ConditionalNode copy{p.handle, p.kind, {}, {}};
          for (const auto& body : p.bodies) {
            copy.bodies.push_back(clone_graph(*body));
            copy.handles.push_back(handle_of(*copy.bodies.back()));
          }
          return copy;
        } else {
          return p;
        }
      },
      params);
}

std::unique_ptr<Graph> clone_graph(const Graph& graph) {
  auto clone = std::make_unique<Graph>();
  std::map<const Node*, Node*> copies;
  for (const auto& node : graph.nodes) {
    auto copy = std::make_unique<Node>(*clone, node->type, copy_params(node->params));
    copy->enabled = node->enabled;
    copies[node.get()] = copy.get();
    clone->copies[node.get()] = {node->id, copy.get()};
    clone->nodes.push_back(std::move(copy));
  }
  for (const Edge& edge : graph.edges) {
    clone->edges.push_back({copies.at(edge.from), copies.at(edge.to), edge.data});
  }
  clone->user_objects = graph.user_objects;
  retain_user_objects(clone->user_objects);
  return clone;
}

void remove_node(Graph& graph, const Node& node) {
  std::erase_if(graph.edges, [&](const Edge& e) { return e.from == &node || e.to == &node; });
  std::erase_if(graph.copies, [&](const auto& c) { return c.second.copy == &node; });
  std::erase_if(graph.nodes, [&](const auto& n) { return n.get() == &node; });
}

std::vector<Node*> topological_order(const Graph& graph) {
  std::map<const Node*, size_t> place;  // insertion order
  for (size_t i = 0; i < graph.nodes.size(); ++i) place[graph.nodes[i].get()] = i;
  std::vector<size_t> waiting_on(graph.nodes.size(), 0);
  std::vector<std::vector<size_t>> dependents(graph.nodes.size());
  for (const Edge& e : graph.edges) {
    ++waiting_on[place.at(e.to)];
    dependents[place.at(e.from)].push_back(place.at(e.to));
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (waiting_on[i] == 0) ready.insert(i);
  }
  std::vector<Node*> order;
  while (!ready.empty()) {
    const size_t next = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(graph.nodes[next].get());
    for (size_t dependent : dependents[next]) {
      if (--waiting_on[dependent] == 0) ready.insert(dependent);
    }
  }
  return order;  // shorter than the graph's nodes only for a cycle, which cuGraphAddDependencies
                 // refuses
}

bool reaches(const Graph& graph, const Node& start, const Node& target) {
  std::set<const Node*> seen{&start};
  std::vector<const Node*> pending{&start};
  while (!pending.empty()) {
    const Node* at = pending.back();
    pending.pop_back();
    if (at == &target) return true;
    for (const Edge& e : graph.edges) {
      if (e.from == at && seen.insert(e.to).second) pending.push_back(e.to);
    }
  }
  return false;
}

bool has_memory_nodes(const Graph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const auto& n) {
    return n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || n->type == CU_GRAPH_NODE_TYPE_MEM_FREE;
  });
}

namespace {

// A node the capture takes: it depends on the capture's dependencies, and becomes them.
CUresult capture_node(State& s, Capture& capture, CUgraphNodeType type, NodeParams params) {
  // The application may have destroyed the graph it captures into.
  if (s.live_graphs.count(capture.graph) == 0) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  std::vector<CUgraphNode> dependencies;
  for (Node* node : capture.dependencies) {
    if (s.live_nodes.count(node) != 0) dependencies.push_back(handle_of(*node));  // not destroyed
  }
  CUgraphNode added = nullptr;
  const CUresult r = add_node(s, *capture.graph, dependencies.data(), dependencies.size(), type,
                              std::move(params), &added);
  if (r == CUDA_SUCCESS) capture.dependencies = {find_node(s, added)};
  return r;
}

}  // namespace

CUresult capture_launch(State& s, Capture& capture, const KernelLaunch& launch) {
  KernelNode kernel;
  kernel.launch = launch;
  kernel.func = launch.function;
  kernel.ctx = effective_context();
  return capture_node(s, capture, CU_GRAPH_NODE_TYPE_KERNEL, std::move(kernel));
}

CUresult capture_host_function(State& s, Capture& capture, const HostNode& host) {
  return capture_node(s, capture, CU_GRAPH_NODE_TYPE_HOST, host);
}

CUresult capture_copy(State& s, Capture& capture, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  MemcpyNode node{};
  node.copy.srcMemoryType = CU_MEMORYTYPE_DEVICE, node.copy.srcDevice = src;
  node.copy.dstMemoryType = CU_MEMORYTYPE_DEVICE, node.copy.dstDevice = dst;
  node.copy.WidthInBytes = bytes, node.copy.Height = 1, node.copy.Depth = 1;
  node.ctx = effective_context();
  return capture_node(s, capture, CU_GRAPH_NODE_TYPE_MEMCPY, node);
}

CUresult capture_memset(State& s, Capture& capture, CUdeviceptr dst, unsigned value,
                        unsigned element_size, size_t count) {
  MemsetNode node{};
  node.memset.dst = dst, node.memset.value = value, node.memset.elementSize = element_size;
  node.memset.width = count, node.memset.height = 1, node.memset.pitch = 0;
  node.ctx = effective_context();
  return capture_node(s, capture, CU_GRAPH_NODE_TYPE_MEMSET, node);
}

}  // namespace gvirtus::simulated

// The simulated device's graph model (graph_model.cpp): what cuGraphCreate, stream capture and
// the cuGraphAdd*Node calls build, and what an executable graph holds a copy of.
//
// A graph owns its nodes, in insertion order, and its edges (from, to, CUgraphEdgeData; default
// data all zero). A node is its CUgraphNodeType, its parameters and (in an executable's copy)
// whether it is enabled; its handle (CUgraphNode) is its address, stable for its life, and a
// graph's handle (CUgraph) is the graph's address. Every live graph and node is registered in
// the state (State::live_graphs, live_nodes), so that a handle is looked up before it is used:
// an unknown one is refused, never dereferenced. A copy of a graph (cuGraphClone, an
// instantiation) maps each original node to its copy, checked by the original's id, since an
// address may be reused once the original is gone.
//
// Everything here runs under the state's lock (guarded()).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <variant>
#include <vector>

#include "kernel_launch.h"

namespace gvirtus::simulated {

struct State;
struct Graph;

struct KernelNode {
  KernelLaunch launch;        // what a launch of the node records
  CUfunction func = nullptr;  // as given: cuGraphKernelNodeGetParams returns them
  CUkernel kern = nullptr;
  CUcontext ctx = nullptr;
  std::map<int, CUlaunchAttributeValue> attributes;  // cuGraphKernelNodeSetAttribute's
  // One pointer per parameter into launch.params, made by cuGraphKernelNodeGetParams: the
  // kernelParams it returns, valid until the node's parameters change.
  std::vector<void*> param_pointers;
};
struct MemcpyNode {
  CUDA_MEMCPY3D copy;
  CUcontext ctx;
};
struct MemsetNode {
  CUDA_MEMSET_NODE_PARAMS memset;
  CUcontext ctx;
};
struct ChildNode {
  std::unique_ptr<Graph> graph;  // the node's own clone of the graph it was given
};
struct EventNode {  // an event record or an event wait node
  CUevent event;
};
struct AllocNode {
  CUDA_MEM_ALLOC_NODE_PARAMS params;    // as given, dptr written; accessDescs not kept here:
  std::vector<CUmemAccessDesc> access;  // the node's own copy of them
};
struct FreeNode {
  CUdeviceptr dptr;
};
struct EmptyNode {};
struct HostNode {  // run on the calling thread each time the graph reaches it
  CUhostFn fn;
  void* data;
};
// A batch memory operation node: its operations, run in order at each launch.
struct MemOpsNode {
  CUcontext ctx;
  unsigned flags;
  std::vector<CUstreamBatchMemOpParams> operations;
};
// A conditional node (cuGraphAddNode_v2's conditional kind): its bodies, graphs of its own made
// with it, and their handles - the array the node's parameters point at, valid for its life.
struct ConditionalNode {
  CUgraphConditionalHandle handle;
  CUgraphConditionalNodeType kind;
  std::vector<std::unique_ptr<Graph>> bodies;
  std::vector<CUgraph> handles;
};
using NodeParams = std::variant<EmptyNode, KernelNode, MemcpyNode, MemsetNode, ChildNode, EventNode,
                                AllocNode, FreeNode, HostNode, ConditionalNode, MemOpsNode>;

struct Node {
  Node(Graph& owner, CUgraphNodeType node_type, NodeParams node_params);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  Graph& graph;
  const uint64_t id;
  const CUgraphNodeType type;
  NodeParams params;
  bool enabled = true;  // in an executable's copy: cuGraphNodeSetEnabled
};

struct Edge {
  Node* from;
  Node* to;
  CUgraphEdgeData data;
};

// A node copied from another graph's node: the original's id, to tell it from a later node at
// the same address.
struct NodeCopy {
  uint64_t original_id;
  Node* copy;
};

struct Graph {
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const uint64_t id;
  std::vector<std::unique_ptr<Node>> nodes;       // in insertion order
  std::vector<Edge> edges;                        // in insertion order
  std::map<const Node*, NodeCopy> copies;         // original -> copy, in a clone or an executable
  std::map<CUuserObject, uint64_t> user_objects;  // the references it holds (user_objects.cpp)
};

// A stream's capture in progress: the graph it builds - its own (cuStreamBeginCapture), or one
// of the application's (cuStreamBeginCaptureToGraph) - and the nodes the next work it takes
// depends on (the node it took last, or what cuStreamUpdateCaptureDependencies set).
// A stream's part in a capture: the stream that began the capture (its origin) owns the graph; a
// stream that joined it (it waited for an event recorded in the capture) adds to the same graph.
struct Capture {
  std::unique_ptr<Graph> owned;  // null when capturing into an existing graph, or joined
  Graph* graph = nullptr;        // owned.get(), or the application's graph, or the origin's
  std::vector<Node*> dependencies;
  CUstream origin = nullptr;  // the stream whose cuStreamEndCapture ends the capture
  uint64_t id = 0;            // the capture's, as cuStreamGetCaptureInfo would name it
};

// An executable graph: its own copy of the graph it was instantiated from.
struct Executable {
  std::unique_ptr<Graph> graph;
  uint64_t source_id;        // the graph instantiated
  unsigned long long flags;  // as instantiated
};

CUgraph handle_of(Graph& graph);
CUgraphNode handle_of(Node& node);

// A live graph (one made, or one a child graph node embeds) or node by its handle, else null.
Graph* find_graph(State& s, CUgraph handle);
Node* find_node(State& s, CUgraphNode handle);

// The copy in `copy` of `original` (cuGraphClone's, an instantiation's), else null.
Node* copy_of(const Graph& copy, const Node& original);

// Adds a node to `graph` depending on `dependencies` (numDependencies of them: live nodes of
// `graph`, none twice; else CUDA_ERROR_INVALID_VALUE and nothing added); its handle in *out.
CUresult add_node(State& s, Graph& graph, const CUgraphNode* dependencies, size_t count,
                  CUgraphNodeType type, NodeParams params, CUgraphNode* out);

// User objects (user_objects.cpp): a graph's references, taken again by each copy of it (a
// clone, an instantiation, a child node's graph) and given back as a graph is destroyed; an
// object whose last reference goes runs its destructor at once.
void retain_user_objects(const std::map<CUuserObject, uint64_t>& references);
void release_user_objects(const std::map<CUuserObject, uint64_t>& references);

// A node's parameters for a copy of it: a child node's graph and a conditional node's bodies are
// cloned, never shared.
NodeParams copy_params(const NodeParams& params);

// A deep copy of `graph`, every node mapped from its original (Graph::copies).
std::unique_ptr<Graph> clone_graph(const Graph& graph);

// Removes a node and every edge it is on.
void remove_node(Graph& graph, const Node& node);

// The nodes in an order that respects every edge, ties broken by insertion order.
std::vector<Node*> topological_order(const Graph& graph);

// Whether `target` is reached from `start` along edges (an edge target -> start would close a
// cycle).
bool reaches(const Graph& graph, const Node& start, const Node& target);

// Whether a graph holds memory allocation or free nodes: the driver forbids deleting its nodes
// and edges, cloning it and embedding it in a child node.
bool has_memory_nodes(const Graph& graph);

// A launch taken by a capturing stream: a kernel node depending on the capture's dependencies,
// which it then replaces.
CUresult capture_launch(State& s, Capture& capture, const KernelLaunch& launch);

// A host function taken by a capturing stream: a host node, as a launch's kernel node.
CUresult capture_host_function(State& s, Capture& capture, const HostNode& host);

// A linear copy between device memory (cuMemcpyDtoDAsync) or a linear memset (cuMemsetD*Async)
// taken by a capturing stream: a copy or memset node, as a launch's kernel node. The caller
// checked the ranges.
CUresult capture_copy(State& s, Capture& capture, CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult capture_memset(State& s, Capture& capture, CUdeviceptr dst, unsigned value,
                        unsigned element_size, size_t count);

// Gives back the memory a graph's allocation nodes took that it still owns (cuGraphDestroy;
// graph_memory_nodes.cpp), and lets the allocations its free nodes named be freed elsewhere again.
void release_graph_memory(State& s, const Graph& graph);

// The streams that joined capture `capture` (Capture::id) leave it, all but `staying` (graphs.cpp:
// a capture's end, or its own stream's destruction).
void leave_capture(State& s, uint64_t capture, CUstream staying);

}  // namespace gvirtus::simulated

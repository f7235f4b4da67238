// Stream capture and graphs as wholes on the simulated device (graph_model.h is the model): a
// capturing stream builds a graph of the kernel launches, host functions, linear copies between
// device memory (cuMemcpyDtoDAsync) and linear memsets (cuMemsetD8/16/32Async) it takes, each a
// node depending on the one before or on the dependencies set for it
// (cuStreamUpdateCaptureDependencies), into a graph of its own or one of the application's
// (cuStreamBeginCaptureToGraph); a stream that waits for an event recorded in a capture joins it
// (fork and join), and leaves it when the capture's own stream ends it (a forked stream that never
// joins back is not refused there, as a GPU's driver would); graphs are created, cloned,
// instantiated into executable graphs (their own copies), queried, described in DOT and destroyed
// here. Other copies and memsets and waits on a capturing stream are refused
// (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), which a real driver would have captured - the simulated
// device says so rather than running them at capture time. Nodes are added one by one in
// graph_nodes.cpp and graph_memory_nodes.cpp, shaped in graph_shape.cpp, updated in executables
// in graph_exec_updates.cpp and launched in graph_launch.cpp.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

bool capturable(const sim::State& s, CUstream stream) {
  // The legacy default stream synchronises with every other: it can never be captured.
  return stream != nullptr && stream != CU_STREAM_LEGACY && sim::known_stream(s, stream);
}

// Whether an edge's data is the default (no ports, the full dependency).
bool default_edge(const CUgraphEdgeData& edge) {
  const CUgraphEdgeData none{};
  return std::memcmp(&edge, &none, sizeof edge) == 0;
}

// Keeps a graph made here (a capture, cuGraphCreate, a clone) and gives its handle.
CUgraph keep(sim::State& s, std::unique_ptr<sim::Graph> graph) {
  const CUgraph handle = sim::handle_of(*graph);
  s.graphs.emplace(handle, std::move(graph));
  return handle;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream,
                                                          CUstreamCaptureMode mode) {
  return sim::guarded([&](sim::State& s) {
    if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL || mode > CU_STREAM_CAPTURE_MODE_RELAXED) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    if (!capturable(s, hStream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (s.capturing.count(hStream) != 0) return CUDA_ERROR_ILLEGAL_STATE;
    sim::Capture capture;
    capture.owned = std::make_unique<sim::Graph>();
    capture.graph = capture.owned.get();
    capture.origin = hStream;
    capture.id = s.next_capture_id++;
    s.capturing.emplace(hStream, std::move(capture));
    s.invalidated_captures.erase(hStream);
    return CUDA_SUCCESS;
  });
}

// Capturing into an application's graph: the captured work depends on `dependencies`, nodes of
// that graph. Edge data must be the default (the simulated device keeps none for captures).
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                                              const CUgraphNode* dependencies,
                                                              const CUgraphEdgeData* dependencyData,
                                                              size_t numDependencies,
                                                              CUstreamCaptureMode mode) {
  return sim::guarded([&](sim::State& s) {
    if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL || mode > CU_STREAM_CAPTURE_MODE_RELAXED ||
        (numDependencies > 0 && dependencies == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    sim::Graph* graph = sim::find_graph(s, hGraph);
    if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!capturable(s, hStream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (s.capturing.count(hStream) != 0) return CUDA_ERROR_ILLEGAL_STATE;
    sim::Capture capture;
    capture.graph = graph;
    capture.origin = hStream;
    capture.id = s.next_capture_id++;
    for (size_t i = 0; i < numDependencies; ++i) {
      sim::Node* node = sim::find_node(s, dependencies[i]);
      if (node == nullptr || &node->graph != graph) return CUDA_ERROR_INVALID_VALUE;
      if (dependencyData != nullptr && !default_edge(dependencyData[i])) {
        return CUDA_ERROR_NOT_SUPPORTED;
      }
      capture.dependencies.push_back(node);
    }
    s.capturing.emplace(hStream, std::move(capture));
    s.invalidated_captures.erase(hStream);
    return CUDA_SUCCESS;
  });
}

// The nodes a capture's next work depends on: added to (CU_STREAM_ADD_CAPTURE_DEPENDENCIES) or
// in place of (CU_STREAM_SET_CAPTURE_DEPENDENCIES) the present ones; nodes of the capture's graph.
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2(
    CUstream hStream, CUgraphNode* dependencies, const CUgraphEdgeData* dependencyData,
    size_t numDependencies, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if ((numDependencies > 0 && dependencies == nullptr) ||
        (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES &&
         flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto capture = s.capturing.find(hStream);
    if (capture == s.capturing.end()) return CUDA_ERROR_ILLEGAL_STATE;
    std::vector<sim::Node*> nodes;
    for (size_t i = 0; i < numDependencies; ++i) {
      sim::Node* node = sim::find_node(s, dependencies[i]);
      if (node == nullptr || &node->graph != capture->second.graph) return CUDA_ERROR_INVALID_VALUE;
      if (dependencyData != nullptr && !default_edge(dependencyData[i])) {
        return CUDA_ERROR_NOT_SUPPORTED;
      }
      nodes.push_back(node);
    }
    std::vector<sim::Node*>& present = capture->second.dependencies;
    if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES) present.clear();
    for (sim::Node* node : nodes) {
      if (std::find(present.begin(), present.end(), node) == present.end()) present.push_back(node);
    }
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  return sim::guarded([&](sim::State& s) {
    if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto capture = s.capturing.find(hStream);
    if (capture == s.capturing.end()) return CUDA_ERROR_ILLEGAL_STATE;
    // Only the stream that began a capture ends it; the streams that joined it leave with it.
    if (capture->second.origin != hStream) return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    sim::Graph* const into = capture->second.graph;
    sim::leave_capture(s, capture->second.id, hStream);
    if (s.invalidated_captures.erase(hStream) != 0) {
      s.capturing.erase(capture);
      *phGraph = nullptr;
      return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    std::unique_ptr<sim::Graph> owned = std::move(capture->second.owned);
    s.capturing.erase(capture);
    if (owned != nullptr) {
      *phGraph = keep(s, std::move(owned));
    } else {  // captured into the application's graph, which it may have destroyed meanwhile
      if (s.live_graphs.count(into) == 0) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
      *phGraph = sim::handle_of(*into);
    }
    return CUDA_SUCCESS;
  });
}

// A capture in progress: its graph, and the nodes its next work depends on (the node captured
// last, or what was set), in an array valid until the next such call on this thread, as the
// driver's until the stream's next call.
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetCaptureInfo_v3(
    CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
    CUgraph* graph_out, const CUgraphNode** dependencies_out, const CUgraphEdgeData** edgeData_out,
    size_t* numDependencies_out) {
  return sim::guarded([&](sim::State& s) {
    if (captureStatus_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto capture = s.capturing.find(hStream);
    if (capture == s.capturing.end()) {
      *captureStatus_out = CU_STREAM_CAPTURE_STATUS_NONE;
      return CUDA_SUCCESS;
    }
    *captureStatus_out = s.invalidated_captures.count(hStream) != 0
                             ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                             : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (s.live_graphs.count(capture->second.graph) == 0) {  // destroyed while captured into
      s.invalidated_captures.insert(hStream);
      *captureStatus_out = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
      if (graph_out != nullptr) *graph_out = nullptr;
      if (dependencies_out != nullptr) *dependencies_out = nullptr;
      if (edgeData_out != nullptr) *edgeData_out = nullptr;
      if (numDependencies_out != nullptr) *numDependencies_out = 0;
      return CUDA_SUCCESS;
    }
    sim::Graph& graph = *capture->second.graph;
    thread_local std::vector<CUgraphNode> handed_out;
    thread_local std::vector<CUgraphEdgeData> default_edges;
    handed_out.clear();
    for (sim::Node* node : capture->second.dependencies) {
      if (s.live_nodes.count(node) != 0) handed_out.push_back(sim::handle_of(*node));
    }
    default_edges.assign(handed_out.size(), CUgraphEdgeData{});
    const size_t n = handed_out.size();
    if (id_out != nullptr) *id_out = graph.id;
    if (graph_out != nullptr) *graph_out = sim::handle_of(graph);
    if (dependencies_out != nullptr) *dependencies_out = n != 0 ? handed_out.data() : nullptr;
    if (edgeData_out != nullptr) *edgeData_out = n != 0 ? default_edges.data() : nullptr;
    if (numDependencies_out != nullptr) *numDependencies_out = n;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if (phGraph == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    *phGraph = keep(s, std::make_unique<sim::Graph>());
    return CUDA_SUCCESS;
  });
}

// An executable graph is a copy of the graph, its nodes mapped from the graph's. A graph with
// memory nodes may have one executable at a time, as the driver allows.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec,
                                                              CUgraph hGraph,
                                                              unsigned long long flags) {
  return sim::guarded([&](sim::State& s) {
    if (phGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const sim::Graph* graph = sim::find_graph(s, hGraph);
    if (graph == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (sim::has_memory_nodes(*graph) &&
        std::any_of(s.executables.begin(), s.executables.end(),
                    [&](const auto& e) { return e.second->source_id == graph->id; })) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (sim::topological_order(*graph).size() != graph->nodes.size()) {
      return CUDA_ERROR_INVALID_VALUE;  // a cycle (never made: cuGraphAddDependencies refuses it)
    }
    // Auto-free, upload, device launch, priority: nothing the record shows; kept to be asked.
    auto executable = std::make_unique<sim::Executable>(
        sim::Executable{sim::clone_graph(*graph), graph->id, flags});
    *phGraphExec = reinterpret_cast<CUgraphExec>(executable.get());
    s.executables.emplace(*phGraphExec, std::move(executable));
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return sim::guarded([&](sim::State& s) {
    return s.executables.erase(hGraphExec) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

// A graph made here; a child node's graph goes only with its node.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) {
  return sim::guarded([&](sim::State& s) {
    const auto graph = s.graphs.find(hGraph);
    if (graph == s.graphs.end()) return CUDA_ERROR_INVALID_HANDLE;
    sim::release_graph_memory(s, *graph->second);
    s.graphs.erase(graph);
    return CUDA_SUCCESS;
  });
}

namespace {

// Nodes as the driver writes them: without an array the count; with one up to *count nodes
// written, the rest of it nulled, *count the nodes written.
CUresult write_nodes(const std::vector<sim::Node*>& nodes, CUgraphNode* out, size_t* count) {
  if (out == nullptr) {
    *count = nodes.size();
    return CUDA_SUCCESS;
  }
  const size_t written = std::min(*count, nodes.size());
  for (size_t i = 0; i < *count; ++i) {
    out[i] = i < written ? sim::handle_of(*nodes[i]) : nullptr;
  }
  *count = written;
  return CUDA_SUCCESS;
}

CUresult graph_nodes(sim::State& s, CUgraph handle, CUgraphNode* out, size_t* count,
                     bool roots_only) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const sim::Graph* graph = sim::find_graph(s, handle);
  if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::vector<sim::Node*> nodes;
  for (const auto& node : graph->nodes) {
    const bool root = std::none_of(graph->edges.begin(), graph->edges.end(),
                                   [&](const sim::Edge& e) { return e.to == node.get(); });
    if (root || !roots_only) nodes.push_back(node.get());
  }
  return write_nodes(nodes, out, count);
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes,
                                                  size_t* numNodes) {
  return sim::guarded(
      [&](sim::State& s) { return graph_nodes(s, hGraph, nodes, numNodes, false); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes,
                                                      size_t* numRootNodes) {
  return sim::guarded(
      [&](sim::State& s) { return graph_nodes(s, hGraph, rootNodes, numRootNodes, true); });
}

// A graph with memory nodes cannot be cloned (the driver's rule: its allocations have one owner).
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  return sim::guarded([&](sim::State& s) {
    if (phGraphClone == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const sim::Graph* original = sim::find_graph(s, originalGraph);
    if (original == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (sim::has_memory_nodes(*original)) return CUDA_ERROR_NOT_SUPPORTED;
    *phGraphClone = keep(s, sim::clone_graph(*original));
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto found = s.executables.find(hGraphExec);
    if (found == s.executables.end()) return CUDA_ERROR_INVALID_VALUE;
    *flags = found->second->flags;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphInstantiateWithParams(
    CUgraphExec* phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  if (instantiateParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUstream upload = instantiateParams->hUploadStream;
  const CUresult checked = sim::guarded([&](sim::State& s) {
    return sim::known_stream(s, upload) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
  instantiateParams->hErrNode_out = nullptr;
  instantiateParams->result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  if (checked != CUDA_SUCCESS) return checked;
  const CUresult result =
      cuGraphInstantiateWithFlags(phGraphExec, hGraph, instantiateParams->flags);
  if (result == CUDA_SUCCESS) instantiateParams->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  return result;
}

namespace {

const char* type_name(CUgraphNodeType type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
      return "kernel";
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      return "memcpy";
    case CU_GRAPH_NODE_TYPE_MEMSET:
      return "memset";
    case CU_GRAPH_NODE_TYPE_GRAPH:
      return "child graph";
    case CU_GRAPH_NODE_TYPE_EMPTY:
      return "empty";
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      return "event wait";
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      return "event record";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      return "mem alloc";
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      return "mem free";
    default:
      return "node";
  }
}

// A graph's nodes (labelled with their types, a kernel's name too) and its edges, a child
// graph's inside a cluster of its own; `prefix` keeps the names of nested graphs apart.
void describe(std::FILE* file, const sim::Graph& graph, const std::string& prefix) {
  std::map<const sim::Node*, size_t> number;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const sim::Node& node = *graph.nodes[i];
    number[&node] = i;
    std::string label = type_name(node.type);
    if (const auto* kernel = std::get_if<sim::KernelNode>(&node.params)) {
      label += " " + kernel->launch.layout.name;
    }
    std::fprintf(file, "  %s%zu [label=\"%s\"];\n", prefix.c_str(), i, label.c_str());
    if (const auto* child = std::get_if<sim::ChildNode>(&node.params)) {
      const std::string inner = prefix + std::to_string(i) + "_";
      std::fprintf(file, "  subgraph cluster_%s {\n", inner.c_str());
      describe(file, *child->graph, inner);
      std::fprintf(file, "  }\n");
    }
  }
  for (const sim::Edge& e : graph.edges) {
    std::fprintf(file, "  %s%zu -> %s%zu;\n", prefix.c_str(), number.at(e.from), prefix.c_str(),
                 number.at(e.to));
  }
}

}  // namespace

// The DOT description of a graph: every node labelled with its type, and its edges.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char* path,
                                                       unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    (void)flags;  // verbosity: the simulated description is always the same
    if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const sim::Graph* graph = sim::find_graph(s, hGraph);
    if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::FILE* file = std::fopen(path, "w");
    if (file == nullptr) return CUDA_ERROR_OPERATING_SYSTEM;
    std::fprintf(file, "digraph dot {\n  label=\"simulated graph\";\n");
    describe(file, *graph, "node");
    std::fprintf(file, "}\n");
    return std::fclose(file) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
  });
}

namespace gvirtus::simulated {

void leave_capture(State& s, uint64_t capture, CUstream staying) {
  for (auto it = s.capturing.begin(); it != s.capturing.end();) {
    if (it->first != staying && it->second.id == capture) {
      s.invalidated_captures.erase(it->first);
      it = s.capturing.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace gvirtus::simulated

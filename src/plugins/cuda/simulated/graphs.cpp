// Stream capture and graphs on the simulated device: a capturing stream keeps the kernel launches
// it takes (state.h's CapturedLaunch) instead of recording them; the capture becomes a graph, an
// executable graph holds a copy, and each launch of it records its launches on the stream it is
// launched on, marked "graph":true. Only kernel launches are captured: copies, memsets and waits
// on a capturing stream are refused (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), which a real driver
// would have captured - the simulated device says so rather than running them at capture time.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

bool capturable(const sim::State& s, CUstream stream) {
  // The legacy default stream synchronises with every other: it can never be captured.
  return stream != nullptr && stream != CU_STREAM_LEGACY && sim::known_stream(s, stream);
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
    s.capturing[hStream];
    s.invalidated_captures.erase(hStream);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  return sim::guarded([&](sim::State& s) {
    if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto capture = s.capturing.find(hStream);
    if (capture == s.capturing.end()) return CUDA_ERROR_ILLEGAL_STATE;
    if (s.invalidated_captures.erase(hStream) != 0) {
      s.capturing.erase(capture);
      *phGraph = nullptr;
      return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    auto graph = std::make_unique<std::vector<sim::CapturedLaunch>>(std::move(capture->second));
    s.capturing.erase(capture);
    *phGraph = reinterpret_cast<CUgraph>(graph.get());
    s.graphs.emplace(*phGraph, std::move(graph));
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if (phGraph == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    auto graph = std::make_unique<std::vector<sim::CapturedLaunch>>();
    *phGraph = reinterpret_cast<CUgraph>(graph.get());
    s.graphs.emplace(*phGraph, std::move(graph));
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec,
                                                              CUgraph hGraph,
                                                              unsigned long long flags) {
  return sim::guarded([&](sim::State& s) {
    if (phGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto graph = s.graphs.find(hGraph);
    if (graph == s.graphs.end()) return CUDA_ERROR_INVALID_HANDLE;
    // Auto-free, upload, device launch, priority: nothing the record shows; kept to be asked.
    auto executable = std::make_unique<std::vector<sim::CapturedLaunch>>(*graph->second);
    *phGraphExec = reinterpret_cast<CUgraphExec>(executable.get());
    s.executables.emplace(*phGraphExec, std::move(executable));
    s.executable_flags[*phGraphExec] = flags;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    const auto executable = s.executables.find(hGraphExec);
    if (executable == s.executables.end()) return CUDA_ERROR_INVALID_HANDLE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    for (const sim::CapturedLaunch& launch : *executable->second) {
      const CUresult r =
          sim::record_launch(s, hStream, {launch.head, launch.tail + ",\"graph\":true"});
      if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
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

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return sim::guarded([&](sim::State& s) {
    s.executable_flags.erase(hGraphExec);
    return s.executables.erase(hGraphExec) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) {
  return sim::guarded([&](sim::State& s) {
    return s.graphs.erase(hGraph) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

namespace {

// A graph's nodes: its captured launches, each one's address its node handle; as the driver,
// without an array the count, with one up to *count nodes written, the rest of it nulled.
CUresult write_nodes(sim::State& s, CUgraph graph, CUgraphNode* nodes, size_t* count,
                     bool roots_only) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto found = s.graphs.find(graph);
  if (found == s.graphs.end()) return CUDA_ERROR_INVALID_VALUE;
  auto& launches = *found->second;
  // A capture on one stream is a chain: its first launch is the one node without dependencies.
  const size_t total = roots_only ? std::min<size_t>(launches.size(), 1) : launches.size();
  if (nodes == nullptr) {
    *count = total;
    return CUDA_SUCCESS;
  }
  const size_t written = std::min(*count, total);
  for (size_t i = 0; i < *count; ++i) {
    nodes[i] = i < written ? reinterpret_cast<CUgraphNode>(&launches[i]) : nullptr;
  }
  *count = written;
  return CUDA_SUCCESS;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes,
                                                  size_t* numNodes) {
  return sim::guarded(
      [&](sim::State& s) { return write_nodes(s, hGraph, nodes, numNodes, false); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes,
                                                      size_t* numRootNodes) {
  return sim::guarded(
      [&](sim::State& s) { return write_nodes(s, hGraph, rootNodes, numRootNodes, true); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  return sim::guarded([&](sim::State& s) {
    if (phGraphClone == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto original = s.graphs.find(originalGraph);
    if (original == s.graphs.end()) return CUDA_ERROR_INVALID_VALUE;
    auto clone = std::make_unique<std::vector<sim::CapturedLaunch>>(*original->second);
    *phGraphClone = reinterpret_cast<CUgraph>(clone.get());
    s.graphs.emplace(*phGraphClone, std::move(clone));
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto found = s.executable_flags.find(hGraphExec);
    if (found == s.executable_flags.end()) return CUDA_ERROR_INVALID_VALUE;
    *flags = found->second;
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

// An executable graph takes a graph's launches when it has as many: the same topology, as the
// simulated device knows one (a chain of kernel launches); otherwise the update fails, saying so.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                                       CUgraphExecUpdateResultInfo* resultInfo) {
  return sim::guarded([&](sim::State& s) {
    if (resultInfo == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto executable = s.executables.find(hGraphExec);
    const auto graph = s.graphs.find(hGraph);
    if (executable == s.executables.end() || graph == s.graphs.end()) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *resultInfo = CUgraphExecUpdateResultInfo{};
    if (executable->second->size() != graph->second->size()) {
      resultInfo->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    *executable->second = *graph->second;
    resultInfo->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
  });
}

// The DOT description of a graph: its launches as a chain of nodes, each labelled with its kernel.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char* path,
                                                       unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    (void)flags;  // verbosity: the simulated description is always the same
    if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto graph = s.graphs.find(hGraph);
    if (graph == s.graphs.end()) return CUDA_ERROR_INVALID_VALUE;
    std::FILE* file = std::fopen(path, "w");
    if (file == nullptr) return CUDA_ERROR_OPERATING_SYSTEM;
    std::fprintf(file, "digraph dot {\n  label=\"simulated graph\";\n");
    for (size_t i = 0; i < graph->second->size(); ++i) {
      std::fprintf(file, "  node%zu [label=\"kernel launch %zu\"];\n", i, i);
      if (i > 0) std::fprintf(file, "  node%zu -> node%zu;\n", i - 1, i);
    }
    std::fprintf(file, "}\n");
    return std::fclose(file) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
  });
}

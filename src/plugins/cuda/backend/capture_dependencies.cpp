// Capturing into a graph, and a capture's dependencies (capture_dependencies.h).
#include "plugins/cuda/backend/capture_dependencies.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/call_marshal.h"
#include "common/error.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/graph_nodes.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/common/graph_node_wire.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;

// A node list and its edge data as they travel.
struct NodeList {
  std::vector<CUgraphNode> nodes;
  std::vector<CUgraphEdgeData> edges;  // empty when none were given
};

NodeList get_node_list(WireReader& in) {
  NodeList list;
  const auto n = in.get<uint32_t>();
  // Bounded, and the bytes must be there before anything is allocated.
  if (n > kMaxNodeEdges || in.remaining() < uint64_t{n} * sizeof(uint64_t)) {
    raise(ErrorKind::kInvalidInput, "a capture's list of " + std::to_string(n) + " nodes");
  }
  list.nodes.resize(n);
  for (auto& node : list.nodes) node = marshal::get_value<CUgraphNode>(in);
  if (in.get_bool() && n > 0) {
    list.edges.resize(n);
    std::memcpy(list.edges.data(), in.get_raw(n * sizeof(CUgraphEdgeData)).data(),
                n * sizeof(CUgraphEdgeData));
  }
  return list;
}

// CUDA_SUCCESS when every node lies in the graph `stream` captures into; CUDA_ERROR_INVALID_VALUE
// (the driver's answer for a node of another graph) otherwise, or the capture's own failure.
CUresult in_capture_graph(CUstream stream, const std::vector<CUgraphNode>& nodes) {
  const auto& d = real();
  if (d.cuStreamGetCaptureInfo_v3 == nullptr || d.cuGraphGetNodes == nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph graph = nullptr;
  CUresult r =
      d.cuStreamGetCaptureInfo_v3(stream, &status, nullptr, &graph, nullptr, nullptr, nullptr);
  if (r != CUDA_SUCCESS) return r;
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || graph == nullptr) {
    return CUDA_ERROR_ILLEGAL_STATE;  // the driver's answer for a stream not capturing
  }
  if (nodes.empty()) return CUDA_SUCCESS;
  size_t count = 0;
  if ((r = d.cuGraphGetNodes(graph, nullptr, &count)) != CUDA_SUCCESS) return r;
  if (count > kMaxGraphNodes) return CUDA_ERROR_NOT_SUPPORTED;
  std::vector<CUgraphNode> present(count);
  if (count > 0 && (r = d.cuGraphGetNodes(graph, present.data(), &count)) != CUDA_SUCCESS) {
    return r;
  }
  const std::unordered_set<CUgraphNode> in_graph(present.begin(),
                                                 present.begin() + std::min(count, present.size()));
  for (CUgraphNode node : nodes) {
    if (!in_graph.contains(node)) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

void begin_capture_to_graph(WireReader& in, WireWriter& out, CUresult& result) {
  const auto stream = marshal::get_value<CUstream>(in);
  const auto graph = marshal::get_value<CUgraph>(in);
  const NodeList list = get_node_list(in);
  const auto mode = in.get<uint32_t>();
  in.expect_end();
  const auto& d = real();
  result = first_failure(
      CUDA_SUCCESS, vet(stream), graph != nullptr ? vet(graph) : CUDA_ERROR_INVALID_VALUE,
      vet_nodes(list.nodes.data(), list.nodes.size()),
      mode <= CU_STREAM_CAPTURE_MODE_RELAXED ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE,
      lacks(d.cuStreamBeginCaptureToGraph));
  if (result == CUDA_SUCCESS) {
    result = d.cuStreamBeginCaptureToGraph(
        stream, graph, list.nodes.empty() ? nullptr : list.nodes.data(),
        list.edges.empty() ? nullptr : list.edges.data(), list.nodes.size(),
        static_cast<CUstreamCaptureMode>(mode));
  }
  out.put<int32_t>(result);
}

void update_dependencies(WireReader& in, WireWriter& out, CUresult& result) {
  const auto stream = marshal::get_value<CUstream>(in);
  NodeList list = get_node_list(in);
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  const auto& d = real();
  result = first_failure(CUDA_SUCCESS, vet(stream), lacks(d.cuStreamUpdateCaptureDependencies_v2));
  if (result == CUDA_SUCCESS) result = in_capture_graph(stream, list.nodes);
  if (result == CUDA_SUCCESS) {
    result = d.cuStreamUpdateCaptureDependencies_v2(
        stream, list.nodes.empty() ? nullptr : list.nodes.data(),
        list.edges.empty() ? nullptr : list.edges.data(), list.nodes.size(), flags);
  }
  out.put<int32_t>(result);
}

}  // namespace

bool run_capture_dependencies_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuStreamBeginCaptureToGraph:
      begin_capture_to_graph(in, out, result);
      return true;
    case Fn::cuStreamUpdateCaptureDependencies_v2:
      update_dependencies(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda

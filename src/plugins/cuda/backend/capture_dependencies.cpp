// Capturing into a graph, and a capture's dependencies (capture_dependencies.h).
#include "plugins/cuda/backend/capture_dependencies.h"

#include <vector>

#include "backend/services/graph_node_lists.h"
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

using NodeList = services::NodeList<CUgraphNode, CUgraphEdgeData>;

NodeList get_node_list(WireReader& in) {
  return services::get_node_list<CUgraphNode, CUgraphEdgeData>(in, kMaxNodeEdges);
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
  return services::nodes_in_graph(
      nodes,
      [&](CUgraphNode* array, size_t* count) { return d.cuGraphGetNodes(graph, array, count); },
      kMaxGraphNodes, CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_SUPPORTED);
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

// Capturing into a graph of the application's, and the dependencies of a capture's next work
// (rows 290-291 of cudart_calls.txt; the wire is the cuda plugin's, its
// backend/capture_dependencies.h). The graph and the dependencies a capture begins with must be
// the session's; the nodes a capture's dependencies are set to must lie in the stream's capture
// graph (the runtime's own requirement), checked against that graph's nodes before the runtime
// sees them, since a capture's nodes are not yet the session's.
#include <cuda_runtime_api.h>

#include <vector>

#include "backend/services/graph_node_lists.h"
#include "common/error.h"
#include "plugins/cudart/backend/graph_nodes.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/graph_node_wire.h"
#include "plugins/cudart/common/graph_wire.h"

namespace gvirtus::cudart {
namespace {

using NodeList = services::NodeList<cudaGraphNode_t, cudaGraphEdgeData>;

cudaError_t in_capture_graph(cudaStream_t stream, const std::vector<cudaGraphNode_t>& nodes) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  cudaError_t r =
      ::cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, nullptr, nullptr, nullptr);
  if (r != cudaSuccess) return r;
  if (status != cudaStreamCaptureStatusActive || graph == nullptr) {
    return cudaErrorIllegalState;  // the runtime's answer for a stream not capturing
  }
  return services::nodes_in_graph(
      nodes,
      [&](cudaGraphNode_t* array, size_t* count) {
        return ::cudaGraphGetNodes(graph, array, count);
      },
      kMaxGraphNodes, cudaSuccess, cudaErrorInvalidValue, cudaErrorNotSupported);
}

}  // namespace

bool run_capture_dependencies_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  if (fn == Fn::cudaStreamBeginCaptureToGraph) {
    const auto stream = handle_from_wire<cudaStream_t>(in.get<uint64_t>());
    const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
    const NodeList list =
        services::get_node_list<cudaGraphNode_t, cudaGraphEdgeData>(in, kMaxNodeEdges);
    const auto mode = in.get<uint32_t>();
    in.expect_end();
    result =
        first_failure(vet(stream), graph != nullptr ? vet(graph) : cudaErrorInvalidValue,
                      vet_nodes(list.nodes.data(), list.nodes.size()),
                      mode <= cudaStreamCaptureModeRelaxed ? cudaSuccess : cudaErrorInvalidValue);
    if (result == cudaSuccess) {
      result = ::cudaStreamBeginCaptureToGraph(
          stream, graph, list.nodes.empty() ? nullptr : list.nodes.data(),
          list.edges.empty() ? nullptr : list.edges.data(), list.nodes.size(),
          static_cast<cudaStreamCaptureMode>(mode));
    }
    out.put<int32_t>(result);
    return true;
  }
  if (fn == Fn::cudaStreamUpdateCaptureDependencies) {
    const auto stream = handle_from_wire<cudaStream_t>(in.get<uint64_t>());
    NodeList list = services::get_node_list<cudaGraphNode_t, cudaGraphEdgeData>(in, kMaxNodeEdges);
    const auto flags = in.get<uint32_t>();
    in.expect_end();
    result = vet(stream);
    if (result == cudaSuccess) result = in_capture_graph(stream, list.nodes);
    if (result == cudaSuccess) {
      result = ::cudaStreamUpdateCaptureDependencies(
          stream, list.nodes.empty() ? nullptr : list.nodes.data(),
          list.edges.empty() ? nullptr : list.edges.data(), list.nodes.size(), flags);
    }
    out.put<int32_t>(result);
    return true;
  }
  return false;
}

}  // namespace gvirtus::cudart

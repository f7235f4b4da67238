// The graph a capture is building, as the session may name it (capture_graphs.h), kept by the
// shared service (services/capture_graphs.h).
#include "plugins/cudart/backend/capture_graphs.h"

#include "backend/services/capture_graphs.h"
#include "backend/services/session_services.h"
#include "plugins/cudart/backend/graph_nodes.h"
#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {
namespace {

cudaGraph_t as_graph(const void* graph) {
  return const_cast<cudaGraph_t>(static_cast<const CUgraph_st*>(graph));
}

services::CaptureGraphs& captures() {
  // Never destroyed: a worker's exit may still run calls.
  static auto& kept = *new services::CaptureGraphs({
      [](const void* graph) {
        return services::session_services().handles.holds(static_cast<uint16_t>(HandleKind::kGraph),
                                                          graph);
      },
      [](const void* graph) { adopt(as_graph(graph)); },
      [](const void* graph) {
        services::session_services().handles.release(static_cast<uint16_t>(HandleKind::kGraph),
                                                     graph);
        forget_graph_nodes(as_graph(graph));
      },
      [](const void* stream) {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        return ::cudaStreamIsCapturing(static_cast<cudaStream_t>(const_cast<void*>(stream)),
                                       &status) == cudaSuccess &&
               status != cudaStreamCaptureStatusNone;
      },
  });
  return kept;
}

}  // namespace

void capture_graph_handed_out(cudaStream_t stream, cudaGraph_t graph) {
  captures().handed_out(stream, graph);
}

bool is_capture_graph(cudaGraph_t graph) {
  return captures().building(graph);
}

void capture_ended(cudaStream_t stream, cudaError_t result) {
  captures().ended(stream, result == cudaSuccess);
}

void forget_capture_graphs() {
  captures().forget_all();
}

}  // namespace gvirtus::cudart

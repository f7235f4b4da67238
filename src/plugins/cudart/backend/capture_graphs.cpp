// The graph a capture is building, as the session may name it (capture_graphs.h), kept by the
// shared service (services/capture_graphs.h).
#include "plugins/cudart/backend/capture_graphs.h"

#include "plugins/cudart/backend/graph_nodes.h"
#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {
namespace {

cudaGraph_t as_graph(const void* graph) {
  return const_cast<cudaGraph_t>(static_cast<const CUgraph_st*>(graph));
}

}  // namespace

services::CaptureGraphs& capture_graphs() {
  // Never destroyed: a worker's exit may still run calls.
  static auto& kept = *new services::CaptureGraphs(
      static_cast<uint16_t>(HandleKind::kGraph),
      {
          [](const void* graph) { adopt(as_graph(graph)); },
          [](const void* graph) { forget_graph_nodes(as_graph(graph)); },
          [](const void* stream) {
            // A stream the session no longer holds (destroyed) captures nothing.
            const auto held = static_cast<cudaStream_t>(const_cast<void*>(stream));
            cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
            return vet(held) == cudaSuccess &&
                   ::cudaStreamIsCapturing(held, &status) == cudaSuccess &&
                   status != cudaStreamCaptureStatusNone;
          },
      });
  return kept;
}

}  // namespace gvirtus::cudart

// The graph a capture is building, as the session may name it (capture_graphs.h), kept by the
// shared service (services/capture_graphs.h).
#include "plugins/cuda/backend/capture_graphs.h"

#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/graph_nodes.h"

namespace gvirtus::cuda {
namespace {

CUgraph as_graph(const void* graph) {
  return const_cast<CUgraph>(static_cast<const CUgraph_st*>(graph));
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
            const auto held = static_cast<CUstream>(const_cast<void*>(stream));
            CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
            return vet(held) == CUDA_SUCCESS && real().cuStreamGetCaptureInfo_v3 != nullptr &&
                   real().cuStreamGetCaptureInfo_v3(held, &status, nullptr, nullptr, nullptr,
                                                    nullptr, nullptr) == CUDA_SUCCESS &&
                   status != CU_STREAM_CAPTURE_STATUS_NONE;
          },
      });
  return kept;
}

}  // namespace gvirtus::cuda

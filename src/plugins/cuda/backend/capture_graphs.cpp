// The graph a capture is building, as the session may name it (capture_graphs.h), kept by the
// shared service (services/capture_graphs.h).
#include "plugins/cuda/backend/capture_graphs.h"

#include "backend/services/capture_graphs.h"
#include "backend/services/session_services.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/graph_nodes.h"

namespace gvirtus::cuda {
namespace {

CUgraph as_graph(const void* graph) {
  return const_cast<CUgraph>(static_cast<const CUgraph_st*>(graph));
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
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        return real().cuStreamGetCaptureInfo_v3 != nullptr &&
               real().cuStreamGetCaptureInfo_v3(static_cast<CUstream>(const_cast<void*>(stream)),
                                                &status, nullptr, nullptr, nullptr, nullptr,
                                                nullptr) == CUDA_SUCCESS &&
               status != CU_STREAM_CAPTURE_STATUS_NONE;
      },
  });
  return kept;
}

}  // namespace

void capture_graph_handed_out(CUstream stream, CUgraph graph) {
  captures().handed_out(stream, graph);
}

bool is_capture_graph(CUgraph graph) {
  return captures().building(graph);
}

void capture_ended(CUstream stream, CUresult result) {
  captures().ended(stream, result == CUDA_SUCCESS);
}

void forget_capture_graphs() {
  captures().forget_all();
}

}  // namespace gvirtus::cuda

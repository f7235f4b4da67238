// The graph a capture is building, as the session may name it before the capture ends
// (capture_graphs.cpp; why and how: services/capture_graphs.h): cudaStreamGetCaptureInfo hands it
// out with the capture's dependency nodes, cudaStreamEndCapture hands it over or it goes.
#pragma once

#include <cuda_runtime_api.h>

namespace gvirtus::cudart {

// cudaStreamGetCaptureInfo gave `graph` for `stream`'s active capture.
void capture_graph_handed_out(cudaStream_t stream, cudaGraph_t graph);
// Whether `graph` is a capture's graph handed out, its capture not ended.
bool is_capture_graph(cudaGraph_t graph);
// cudaStreamEndCapture(stream) answered `result`.
void capture_ended(cudaStream_t stream, cudaError_t result);
// A reset destroyed the captures: their graphs are forgotten.
void forget_capture_graphs();

}  // namespace gvirtus::cudart

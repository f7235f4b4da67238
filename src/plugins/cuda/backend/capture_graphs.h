// The graph a capture is building, as the session may name it before the capture ends
// (capture_graphs.cpp; why and how: services/capture_graphs.h): cuStreamGetCaptureInfo hands it
// out with the capture's dependency nodes, cuStreamEndCapture hands it over or it goes.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

// cuStreamGetCaptureInfo gave `graph` for `stream`'s active capture.
void capture_graph_handed_out(CUstream stream, CUgraph graph);
// Whether `graph` is a capture's graph handed out, its capture not ended.
bool is_capture_graph(CUgraph graph);
// cuStreamEndCapture(stream) answered `result`: a graph the capture's end did not hand over is
// gone (its handle and nodes forgotten).
void capture_ended(CUstream stream, CUresult result);
// A reset destroyed the captures: their graphs are forgotten.
void forget_capture_graphs();

}  // namespace gvirtus::cuda

// The graph a capture is building, as the session may name it before the capture ends
// (capture_graphs.cpp; why and how: services/capture_graphs.h): cudaStreamGetCaptureInfo hands it
// out with the capture's dependency nodes, cudaStreamEndCapture hands it over or it goes.
#pragma once

#include "backend/services/capture_graphs.h"

namespace gvirtus::cudart {

// The session's: cudaStreamGetCaptureInfo hands graphs out, cudaStreamEndCapture ends them (the
// stream's handle and whether it answered success), a reset forgets them all.
services::CaptureGraphs& capture_graphs();

}  // namespace gvirtus::cudart

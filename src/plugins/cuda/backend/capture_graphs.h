// The graph a capture is building, as the session may name it before the capture ends
// (capture_graphs.cpp; why and how: services/capture_graphs.h): cuStreamGetCaptureInfo hands it
// out with the capture's dependency nodes, cuStreamEndCapture hands it over or it goes.
#pragma once

#include "backend/services/capture_graphs.h"

namespace gvirtus::cuda {

// The session's: cuStreamGetCaptureInfo hands graphs out, cuStreamEndCapture ends them (the
// stream's handle and whether it answered success), a reset forgets them all.
services::CaptureGraphs& capture_graphs();

}  // namespace gvirtus::cuda

// Which streams the client libcuda.so.1 began capturing (stream_capture.cpp), for the stub's own
// work that a capture cannot hold: waiting for a capturing stream would end its capture.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

// Whether `stream` is between a successful cuStreamBeginCapture and its cuStreamEndCapture.
bool capturing(CUstream stream);

}  // namespace gvirtus::cuda

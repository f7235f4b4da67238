// Which streams capture (stream_capture.cpp), for the stub's own work that a capture cannot hold:
// waiting for a capturing stream would end its capture.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

// Whether `stream` is between a successful cuStreamBeginCapture and its cuStreamEndCapture, or,
// while such a capture is under way, whether the backend's driver says the stream captures (a
// stream that joined a capture by waiting for an event recorded in it: one round trip). Never
// asks the backend while no capture began through the stub.
bool capturing(CUstream stream);

// The stub's refusal of its own work on a capturing stream, as the driver refuses what a capture
// cannot hold: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, after the backend's driver is made to
// invalidate the capture as the refusal would natively (it is asked whether the stream is done,
// which a capturing stream cannot answer), so that cuStreamEndCapture gives no graph there either
// (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED).
CUresult refuse_in_capture(CUstream stream);

}  // namespace gvirtus::cuda

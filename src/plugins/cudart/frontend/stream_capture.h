// Which streams capture (graphs.cpp), for the stub's own work that a capture
// cannot hold: a copy from or to the client's ordinary memory would be captured as a copy of the
// backend's transient buffer.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>

namespace gvirtus::cudart {

// Whether `stream` is between a successful cudaStreamBeginCapture and its cudaStreamEndCapture,
// or, while such a capture is under way, whether the backend's runtime says the stream captures (a
// stream that joined a capture by waiting for an event recorded in it: one round trip). Never
// asks the backend while no capture began through the stub.
bool capturing(cudaStream_t stream);

// What a capturing stream answers an operation it cannot hold, natively: the backend's runtime
// is asked to wait for the stream, which it refuses as natively (cudaErrorStreamCaptureUnsupported,
// recorded as the last error, the capture invalidated), or cudaErrorStreamCaptureInvalidated when
// the capture already is. nullopt when the backend's runtime waited for the stream after all (it
// was not capturing there): the caller goes on as it would have.
std::optional<cudaError_t> refuse_in_capture(cudaStream_t stream);

}  // namespace gvirtus::cudart

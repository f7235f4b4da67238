// Host functions that run on the client (host_functions.h).
#include "plugins/cuda/backend/host_functions.h"

#include "backend/services/host_gates.h"
#include "common/call_marshal.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/request_checks.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;
using services::host_gates;

// Whether work enqueued on `stream` now may run more than once: a capture takes it into a graph.
// A stream the driver cannot answer for counts as captured: a gate kept too long costs memory, a
// gate freed while a graph holds it would be run after its end.
bool may_run_again(CUstream stream) {
  if (real().cuStreamIsCapturing == nullptr) return false;  // no captures without it
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return real().cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS ||
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// cuLaunchHostFunc (`callback` false) or cuStreamAddCallback: a gate in the stream.
void enqueue_gate(WireReader& in, WireWriter& out, CUresult& result, bool callback) {
  const auto stream = marshal::get_value<CUstream>(in);
  const auto token = in.get<uint64_t>();
  in.expect_end();
  const auto& d = real();
  result =
      first_failure(CUDA_SUCCESS, vet(stream), token != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE,
                    callback ? lacks(d.cuStreamAddCallback) : lacks(d.cuLaunchHostFunc));
  if (result == CUDA_SUCCESS) {
    services::Gate* gate = host_gates().make(token, !may_run_again(stream));
    if (gate == nullptr) {
      result = CUDA_ERROR_OUT_OF_MEMORY;  // HostGates::kMaxGates live already
    } else {
      result = callback ? d.cuStreamAddCallback(stream, reach_callback_gate, gate, 0)
                        : d.cuLaunchHostFunc(stream, reach_host_gate, gate);
      if (result != CUDA_SUCCESS) host_gates().discard(gate);  // never enqueued
    }
  }
  out.put<int32_t>(result);
}

}  // namespace

void CUDA_CB reach_host_gate(void* gate) {
  services::HostGates::reach(gate, CUDA_SUCCESS);
}

void CUDA_CB reach_callback_gate(CUstream, CUresult status, void* gate) {
  services::HostGates::reach(gate, status);
}

bool run_host_function_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuLaunchHostFunc:
      enqueue_gate(in, out, result, false);
      return true;
    case Fn::cuStreamAddCallback:
      enqueue_gate(in, out, result, true);
      return true;
    case Fn::gvirtusHostCallbackNext:
      services::serve_next_gate(services::host_gates(), in, out);
      result = CUDA_SUCCESS;
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda

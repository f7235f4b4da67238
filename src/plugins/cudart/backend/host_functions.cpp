// Host functions that run on the client (host_functions.h).
#include "plugins/cudart/backend/host_functions.h"

#include "backend/services/rejections.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/graph_wire.h"

namespace gvirtus::cudart {
namespace {

using services::host_gates;

void CUDART_CB reach_callback_gate(cudaStream_t, cudaError_t status, void* gate) {
  services::HostGates::reach(gate, status);
}

// Whether work enqueued on `stream` now may run more than once: a capture takes it into a graph.
// A stream the runtime cannot answer for counts as captured: a gate kept too long costs memory,
// a gate freed while a graph holds it would be run after its end.
bool may_run_again(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return ::cudaStreamIsCapturing(stream, &status) != cudaSuccess ||
         status != cudaStreamCaptureStatusNone;
}

// cudaLaunchHostFunc (`callback` false) or cudaStreamAddCallback: a gate in the stream.
void enqueue_gate(WireReader& in, WireWriter& out, cudaError_t& result, bool callback) {
  const auto stream = handle_from_wire<cudaStream_t>(in.get<uint64_t>());
  const auto token = in.get<uint64_t>();
  in.expect_end();
  result = first_failure(vet(stream), token != 0 ? cudaSuccess : cudaErrorInvalidValue);
  if (result == cudaSuccess) {
    services::Gate* gate = host_gates().make(token, !may_run_again(stream));
    if (gate == nullptr) {
      // The runtime never saw the call: its last error would not say so (rejections.h).
      result = static_cast<cudaError_t>(
          services::refuse(cudaErrorMemoryAllocation, "cudart", "host function", nullptr,
                           "the session holds the most host functions it may"));
    } else {
      result = callback ? ::cudaStreamAddCallback(stream, reach_callback_gate, gate, 0)
                        : ::cudaLaunchHostFunc(stream, reach_host_gate, gate);
      if (result != cudaSuccess) host_gates().discard(gate);  // never enqueued
    }
  }
  out.put<int32_t>(result);
}

}  // namespace

void CUDART_CB reach_host_gate(void* gate) {
  services::HostGates::reach(gate, cudaSuccess);
}

uint64_t host_gate_token(const cudaHostNodeParams& params) {
  return params.fn == reach_host_gate ? host_gates().token_of(params.userData) : 0;
}

bool is_host_node_call(Fn fn) {
  return fn == Fn::cudaGraphAddHostNode || fn == Fn::cudaGraphHostNodeGetParams ||
         fn == Fn::cudaGraphHostNodeSetParams || fn == Fn::cudaGraphExecHostNodeSetParams;
}

bool run_host_function_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaLaunchHostFunc:
      enqueue_gate(in, out, result, false);
      return true;
    case Fn::cudaStreamAddCallback:
      enqueue_gate(in, out, result, true);
      return true;
    case Fn::gvirtusHostCallbackNext:
      services::serve_next_gate(services::host_gates(), in, out);
      result = cudaSuccess;
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cudart

// The cudart plugin's host functions that run on the client (rows 278-284 of cudart_calls.txt;
// the gates: services/host_gates.h). The wire is the cuda plugin's (its backend/host_functions.h):
//   cudaLaunchHostFunc, cudaStreamAddCallback (sent ahead)
//            u64 stream, u64 token. Reply: i32 result. A gate enqueued on a stream that is not
//            capturing runs once; one captured lives on.
//   gvirtusHostCallbackNext
//            u64 the run the client finished (0: none), u32 milliseconds to wait at most. Reply:
//            i32 result, u8 reached, then when reached: u64 run, u64 token, i32 status (a stream
//            callback's cudaError_t), u8 once.
// Graph host nodes (graph_node_calls.cpp) carry a token where the function was: add, set and exec
// set requests as the event nodes' with u64 token for the event; a get replies i32 result, u64
// token.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/services/host_gates.h"
#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

// The enqueues and gvirtusHostCallbackNext; false if `fn` is none of them.
bool run_host_function_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// Whether `fn` is one of the graph host node rows (graph_node_calls.cpp serves them).
bool is_host_node_call(Fn fn);

// The runtime's side of a gate: a host function whose data is a Gate.
void CUDART_CB reach_host_gate(void* gate);

// Runs `call(params)` with a host node's parameters naming a new gate for `token` (kept for the
// session: a graph runs its nodes any number of times); the gate goes again when the call fails.
template <typename Call>
cudaError_t with_host_gate(uint64_t token, Call&& call) {
  services::Gate* gate = services::host_gates().make(token, false);
  if (gate == nullptr) return cudaErrorMemoryAllocation;  // HostGates::kMaxGates live already
  const cudaHostNodeParams params{reach_host_gate, gate};
  const cudaError_t result = call(params);
  if (result != cudaSuccess) services::host_gates().discard(gate);
  return result;
}

// The token of a host node's gate, or 0 when its parameters name none of the session's gates.
uint64_t host_gate_token(const cudaHostNodeParams& params);

}  // namespace gvirtus::cudart

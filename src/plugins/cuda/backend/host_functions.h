// The cuda plugin's host functions that run on the client (rows 260-262 of cuda_calls.txt; graph
// host nodes, rows 263-266: graph_node_calls.cpp), called by run_custom: true when `fn` is one
// of them (the reply written and `result` set), false otherwise. The gates are the plugin's
// (services/host_gates.h).
//   cuLaunchHostFunc, cuStreamAddCallback (sent ahead)
//            u64 stream, u64 token (the client's callback, non-zero). Reply: i32 result. A gate
//            enqueued on a stream that is not capturing runs once; one captured lives on.
//   gvirtusHostCallbackNext
//            u64 the run the client finished (0: none), u32 milliseconds to wait at most. Reply:
//            i32 result, u8 reached, then when reached: u64 run, u64 token, i32 status (a stream
//            callback's CUresult), u8 once (the gate is gone: the client may forget the token).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_host_function_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

// The driver's side of a gate: a host function and a stream callback whose data is a Gate.
void CUDA_CB reach_host_gate(void* gate);
void CUDA_CB reach_callback_gate(CUstream stream, CUresult status, void* gate);

}  // namespace gvirtus::cuda

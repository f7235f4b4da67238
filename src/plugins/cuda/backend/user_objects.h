// The cuda plugin's user objects (rows 267-271 of cuda_calls.txt), called by run_custom: true
// when `fn` is one of them (the reply written and `result` set), false otherwise. The destructor
// is the client's, named by a token (frontend/host_callbacks.h); the driver gets a gate nothing
// waits on in its place (services/host_gates.h). References are counted by the session's ledger
// (services/user_object_ledger.h): a release of references the session does not hold, or a use
// of an object it holds none of, is CUDA_ERROR_INVALID_VALUE before the driver sees it.
//   cuUserObjectCreate        u64 token, u32 initial count, u32 flags. Reply: i32, u64 object.
//   cuUserObjectRetain, cuUserObjectRelease
//                             u64 object, u32 count. Reply: i32.
//   cuGraphRetainUserObject   u64 graph, u64 object, u32 count, u32 flags. Reply: i32.
//   cuGraphReleaseUserObject  u64 graph, u64 object, u32 count. Reply: i32.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_user_object_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

// A destroyed graph's references to user objects went with it; a new session holds none.
void forget_user_object_references(CUgraph graph);
void forget_all_user_objects();

}  // namespace gvirtus::cuda

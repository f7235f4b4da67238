// The cuda plugin's hand-written graph calls beyond the queries (graph_calls.cpp), called by
// run_custom: true when `fn` is one of them (the reply written and `result` set), false otherwise.
//   cuGraphInstantiateWithParams  the parameters' upload stream is a handle inside a struct, which
//                         the generated rows cannot vet: it must be the session's; the executable
//                         graph becomes the session's.
//   cuGraphDebugDotPrint  the driver writes the DOT file on the backend's machine, in a private
//                         temporary file; its text goes back for the stub to write at the
//                         client's path.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_graph_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

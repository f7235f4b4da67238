// The cuda plugin's handlers of questions about graphs (graph_queries.cpp), called by run_custom:
// true when `fn` is one of them (the reply written and `result` set), false otherwise.
// cuGraphGetNodes, cuGraphGetRootNodes: the graph's nodes (all, or those without dependencies), as
// the driver gives them. No call takes a node yet, so the
// nodes are not held as the session's handles; a call that takes one will vet it then.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_graph_query(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

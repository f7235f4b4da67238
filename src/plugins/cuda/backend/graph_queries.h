// The cuda plugin's handlers of questions about graphs (graph_queries.cpp), called by run_custom:
// true when `fn` is one of them (the reply written and `result` set), false otherwise.
// cuGraphGetNodes, cuGraphGetRootNodes: the graph's nodes (all, or those without dependencies), as
// the driver gives them, adopted as the session's (graph_nodes.h).
// cuStreamGetCaptureInfo_v3: a capture in progress, its graph and dependency nodes as the
// driver's values (not the session's until the capture ends: graph_queries.cpp says why).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_graph_query(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

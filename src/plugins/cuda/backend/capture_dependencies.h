// Capturing into a graph of the application's, and the dependencies of a capture's next work
// (rows 272-273 of cuda_calls.txt), called by run_custom: true when `fn` is one of them (the reply
// written and `result` set), false otherwise.
//   cuStreamBeginCaptureToGraph
//            u64 stream, u64 graph, u32 n (at most kMaxNodeEdges), n u64 dependencies, u8 edge
//            data given, then n CUgraphEdgeData when given, u32 mode. Reply: i32 result. The graph
//            and the dependencies must be the session's.
//   cuStreamUpdateCaptureDependencies_v2
//            u64 stream, u32 n, n u64 nodes, u8 edge data given, n CUgraphEdgeData when given,
//            u32 flags. Reply: i32 result. The nodes must lie in the stream's capture graph (the
//            driver's own requirement, checked against that graph's nodes before the driver sees
//            them: a capture's nodes are not yet the session's).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_capture_dependencies_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

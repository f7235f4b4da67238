// The cuda plugin's handlers of graphs built node by node (rows 211-251, 278-279 and 129 of
// cuda_calls.txt; wire: common/graph_node_wire.h), called by run_custom: true when `fn` is one of
// them (the reply written and `result` set), false otherwise.
//   graph_node_calls.cpp   adding nodes of each kind, and reading and setting their parameters
//                          in a graph or in an executable graph, and conditional nodes with
//                          the handles made for them (a node names only a handle the session
//                          made for its own graph);
//   graph_shape_calls.cpp  a graph's shape (types, dependencies, edges, enabled nodes, a node's
//                          place in a clone), kernel nodes' attributes, destroying nodes and
//                          graphs.
// Every graph, node, event, context, function and executable graph is vetted as the session's
// before it reaches the driver (nodes: graph_nodes.h), and every device range a memset or copy
// node names is vetted over its whole extent (graph_node_params.h).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_graph_node_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result);
bool run_graph_shape_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

// Forgets the conditional handles made for `graph` (destroyed), or every one (null: a new
// session).
void forget_conditional_handles(CUgraph graph);

}  // namespace gvirtus::cuda

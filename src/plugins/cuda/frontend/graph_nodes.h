// Graph nodes in the client libcuda.so.1 (graph_nodes.cpp), for the calls built over them
// (graph_shape.cpp: the generic cuGraphAddNode, cuGraphNodeSetParams and cuGraphExecNodeSetParams,
// and the legacy forms). Each returns what the driver would: CUDA_ERROR_INVALID_VALUE for
// missing parameters, CUDA_ERROR_NOT_SUPPORTED for a copy with a side in this process's memory.
// The set calls take a null executable graph for the graph's own node.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda_calls.h"

namespace gvirtus::cuda {

CUresult add_kernel_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                         size_t n, const CUDA_KERNEL_NODE_PARAMS* params);
CUresult set_kernel_node(CUgraphExec executable, CUgraphNode node,
                         const CUDA_KERNEL_NODE_PARAMS* params);
CUresult get_kernel_node(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS* params);

CUresult add_memset_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                         size_t n, const CUDA_MEMSET_NODE_PARAMS* params, CUcontext context);
CUresult set_memset_node(CUgraphExec executable, CUgraphNode node,
                         const CUDA_MEMSET_NODE_PARAMS* params, CUcontext context);

CUresult add_memcpy_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                         size_t n, const CUDA_MEMCPY3D* copy, CUcontext context);
CUresult set_memcpy_node(CUgraphExec executable, CUgraphNode node, const CUDA_MEMCPY3D* copy,
                         CUcontext context);

CUresult add_empty_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                        size_t n);
// `ownership`: a CUgraphChildGraphNodeOwnership's bits (the graph cloned, or moved into the node).
CUresult add_child_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
                        CUgraph child, uint32_t ownership);
CUresult set_child_node(CUgraphExec executable, CUgraphNode node, CUgraph child);

// fn: cuGraphAddEventRecordNode or cuGraphAddEventWaitNode; for the set, one of the four
// cuGraph(Exec)Event(Record|Wait)NodeSetEvent.
CUresult add_event_node(Fn fn, CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                        size_t n, CUevent event);
CUresult set_event_node(Fn fn, CUgraphExec executable, CUgraphNode node, CUevent event);

// `params->dptr` is set on success.
CUresult add_alloc_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
                        CUDA_MEM_ALLOC_NODE_PARAMS* params);
CUresult add_free_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
                       CUdeviceptr address);

// The host function travels as a token (host_functions.h): it runs in this process each time
// the graph reaches the node.
CUresult add_host_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
                       const CUDA_HOST_NODE_PARAMS* params);
CUresult set_host_node(CUgraphExec executable, CUgraphNode node,
                       const CUDA_HOST_NODE_PARAMS* params);
CUresult get_host_node(CUgraphNode node, CUDA_HOST_NODE_PARAMS* params);

// What the stub handed out for a node (argument and descriptor copies) goes with it; a graph's
// copies and its allocation nodes' memory go with the graph.
// Batch memory operation nodes; a set with a null executable is the graph's own.
CUresult add_mem_ops_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                          size_t n, const CUDA_BATCH_MEM_OP_NODE_PARAMS* params);
CUresult set_mem_ops_node(CUgraphExec executable, CUgraphNode node,
                          const CUDA_BATCH_MEM_OP_NODE_PARAMS* params);
CUresult get_mem_ops_node(CUgraphNode node, CUDA_BATCH_MEM_OP_NODE_PARAMS* params);

// A conditional node (the generic add's conditional kind): its bodies, graphs the backend's
// driver made, come back with it; params.phGraph_out points at them, kept for the node's life.
CUresult add_conditional_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                              size_t n, CUDA_CONDITIONAL_NODE_PARAMS& params);
void forget_node_copies(CUgraphNode node);
// `noted_by`: the allocation clock before the graph was destroyed (memory_ranges.h).
void forget_graph_copies(CUgraph graph, uint64_t noted_by);

}  // namespace gvirtus::cuda

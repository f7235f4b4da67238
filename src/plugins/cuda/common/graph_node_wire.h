// Graphs built node by node on the wire (custom rows 211-251, 278-279 and 281-284 of
// cuda_calls.txt), for
// the stub (frontend/graph_nodes.cpp, graph_shape.cpp) and the backend
// (backend/graph_node_calls.cpp, graph_shape_calls.cpp). Nodes are the backend driver's own values,
// which the stub hands out as they are and the backend vets as the session's
// (backend/graph_nodes.h). Handles travel as u64.
//
// Requests open with what names the node:
//   add      u64 graph, u32 n, n u64 dependencies (n at most kMaxNodeEdges), then the kind's
//            parameters. Reply: i32 result, u64 node (null after a failure).
//   get      u64 node. Reply: i32 result, then on success the kind's parameters.
//   set      u64 node, then the kind's parameters. Reply: i32 result.
//   exec set u64 executable graph, u64 node, then the kind's parameters. Reply: i32 result.
// The kinds' parameters:
//   kernel   KernelNodeRecord, then a blob: the parameter bytes, each argument at its offset by
//            the kernel's layout (as a launch's, driver_wire.h). The get reply adds u64 the node's
//            graph (the stub keeps the arguments it hands out until the graph is destroyed).
//   memset   MemsetNodeRecord.
//   memcpy   MemcpyNodeRecord: an ArrayBoxRequest (driver_wire.h) whose sides are device memory
//            or arrays (never the client's memory: a node runs each time its graph does), a null
//            stream, then u64 the context.
//   event    u64 event.
//   child    u64 graph, u32 ownership (a CUgraphChildGraphNodeOwnership: the graph cloned into
//            the node, or moved into it, then the node's) (add); the get reply: u64 the node's own
//            graph.
//   mem alloc add: MemAllocNodeRecord, then u32 n and n CUmemAccessDesc (n at most
//            kMaxAccessDescs); the reply adds u64 the allocation's address after the node. The
//            get reply: the same record and descriptors, then u64 address, u64 the node's graph.
//   mem free add: u64 address; the get reply: u64 address.
//   conditional (gvirtusGraphAddConditionalNode, row 279: the generic cuGraphAddNode's conditional
//            kind) add: u64 handle (one cuGraphConditionalHandleCreate made for the graph), u32
//            type (a CUgraphConditionalNodeType), u32 size (at most kMaxConditionalBodies), u64
//            context; the reply adds u32 n and n u64 graphs after the node: the bodies the driver
//            made, the node's (each a graph of the session it may fill but not destroy).
//   batch memory operations (rows 281-284)
//            u64 context, u32 flags, u32 count (at most kMaxBatchMemOps), then count MemOpRecords
//            (driver_wire.h); the get reply: the same, then u64 the node's graph (the stub keeps
//            the operations it hands out until the node's parameters change or its graph goes).
//   cuGraphConditionalHandleCreate (row 278)
//            u64 graph, u64 context, u32 default launch value, u32 flags. Reply: i32 result,
//            u64 handle (0 after a failure).
//   cuGraphDestroy (row 129)
//            u64 graph. Reply: i32 result.
// The queries and edits of a graph's shape:
//   cuGraphNodeGetType   u64 node. Reply: i32 result, i32 type.
//   cuGraphDestroyNode   u64 node. Reply: i32 result.
//   cuGraphNodeFindInClone  u64 original node, u64 clone graph. Reply: i32 result, u64 node.
//   cuGraphNodeGetEnabled   u64 executable graph, u64 node. Reply: i32 result, u32 enabled.
//   cuGraphNodeSetEnabled   u64 executable graph, u64 node, u32 enabled. Reply: i32 result.
//   cuGraphNodeGetDependencies_v2, cuGraphNodeGetDependentNodes_v2
//            u64 node, u8 wanted (kShape* bits), u64 capacity. Reply: i32 result, then on success
//            u64 count, u32 n, n u64 nodes, u8 edge data given, then n CUgraphEdgeData when given.
//   cuGraphGetEdges_v2
//            u64 graph, u8 wanted, u64 capacity. Reply: i32 result, then on success u64 count,
//            u32 n, n u64 from, n u64 to, u8 edge data given, then n CUgraphEdgeData when given.
//   cuGraphAddDependencies_v2, cuGraphRemoveDependencies_v2
//            u64 graph, u32 n, n u64 from, n u64 to, u8 edge data given, n records when given.
//            Reply: i32 result.
//   cuGraphKernelNodeGetAttribute, cuGraphKernelNodeSetAttribute
//            u64 node, u32 attribute (a CUlaunchAttributeID, any value: the driver judges), then
//            for the set form the value (sizeof(CUlaunchAttributeValue) bytes). The get reply:
//            i32 result, the value (zeroed after a failure).
//   cuGraphKernelNodeCopyAttributes  u64 destination node, u64 source node. Reply: i32 result.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <tuple>

#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

// The most dependencies or edges one request names (as many as a reply carries).
inline constexpr uint64_t kMaxNodeEdges = kMaxGraphNodes;

// The most access descriptors a memory allocation node carries (one per device, at most).
inline constexpr uint32_t kMaxAccessDescs = 1024;

// The most bodies a conditional node has (a switch's cases; an if has two at most, a while one).
inline constexpr uint32_t kMaxConditionalBodies = 4096;

// Which of a shape query's outputs the caller gave.
inline constexpr uint8_t kShapeNodes = 1;  // the nodes array (for the edges: from and to)
inline constexpr uint8_t kShapeEdges = 2;  // the edge data array
inline constexpr uint8_t kShapeCount = 4;

// A kernel node's parameters but for the arguments: CUDA_KERNEL_NODE_PARAMS_v2 without its
// pointers. The function or the kernel names the code (the driver takes either); the context is
// the node's (null: the current one).
struct KernelNodeRecord {
  CUfunction function;
  CUkernel kernel;
  CUcontext context;
  uint32_t grid_x, grid_y, grid_z;
  uint32_t block_x, block_y, block_z;
  uint32_t shared_bytes;
  static constexpr auto kFields = std::tuple{
      &KernelNodeRecord::function,    &KernelNodeRecord::kernel,  &KernelNodeRecord::context,
      &KernelNodeRecord::grid_x,      &KernelNodeRecord::grid_y,  &KernelNodeRecord::grid_z,
      &KernelNodeRecord::block_x,     &KernelNodeRecord::block_y, &KernelNodeRecord::block_z,
      &KernelNodeRecord::shared_bytes};
};

// CUDA_MEMSET_NODE_PARAMS and the node's context.
struct MemsetNodeRecord {
  CUdeviceptr dst;
  uint64_t pitch;
  uint32_t value;
  uint32_t element_size;
  uint64_t width;
  uint64_t height;
  CUcontext context;
  static constexpr auto kFields = std::tuple{
      &MemsetNodeRecord::dst,          &MemsetNodeRecord::pitch, &MemsetNodeRecord::value,
      &MemsetNodeRecord::element_size, &MemsetNodeRecord::width, &MemsetNodeRecord::height,
      &MemsetNodeRecord::context};
};

// CUDA_MEM_ALLOC_NODE_PARAMS but for its access descriptors and address: the pool's properties
// (CUmemPoolProps's fields the driver reads) and the size.
struct MemAllocNodeRecord {
  uint32_t alloc_type;     // a CUmemAllocationType
  uint32_t handle_types;   // CUmemAllocationHandleType bits
  uint32_t location_type;  // a CUmemLocationType
  int32_t location_id;
  uint64_t bytes;
  static constexpr auto kFields =
      std::tuple{&MemAllocNodeRecord::alloc_type, &MemAllocNodeRecord::handle_types,
                 &MemAllocNodeRecord::location_type, &MemAllocNodeRecord::location_id,
                 &MemAllocNodeRecord::bytes};
};

}  // namespace gvirtus::cuda

// Building graphs node by node on the wire (custom rows 221-267 of cudart_calls.txt), for the stub
// (frontend/graph_nodes.cpp) and the backend (backend/graph_node_calls.cpp). Handles travel as
// u64 (graph_wire.h); nodes are the backend runtime's own values, which the stub hands out as
// they are and the backend vets as the session's (backend/graph_nodes.h).
//
// Requests open with what names the node:
//   add      u64 graph, u32 n, n u64 dependencies (n at most kMaxGraphNodes), then the kind's
//            parameters. Reply: i32 result, then on success u64 node.
//   get      u64 node. Reply: i32 result, then on success the kind's parameters.
//   set      u64 node, then the kind's parameters. Reply: i32 result.
//   exec set u64 executable graph, u64 node, then the kind's parameters. Reply: i32 result.
// The kinds' parameters:
//   kernel   KernelNodeWire, then a blob: the parameter bytes, each argument at its offset (as a
//            launch's, common/module_wire.h). The kernel is the id the stub resolved. The get
//            reply adds u64 the node's graph (the stub keeps the arguments it hands out until
//            the graph is destroyed).
//   memset   MemsetNodeWire.
//   memcpy   MemcpyNodeWire (each side a pitched pointer or a CUDA array, the session's); the 1D
//            forms Memcpy1DNodeWire.
//   event    u64 event.
//   child    u64 graph (add); the get reply: u64 the node's own graph.
//   mem alloc add: the pool properties (sizeof(cudaMemPoolProps) bytes), u32 n, n access
//            descriptors (sizeof(cudaMemAccessDesc) bytes each, n at most kMaxAccessDescs), u64
//            bytes; the reply adds u64 the allocation's address after the node. The get reply:
//            the same, then u64 address, u64 the node's graph (the stub keeps the descriptors it
//            hands out until the graph is destroyed).
//   mem free add: u64 address; the get reply: u64 address.
//   generic  (cudaGraphAddNode, cudaGraphNodeSetParams, cudaGraphExecNodeSetParams) i32 the node
//            type, then that kind's parameters as above (a child graph's: u64 graph, u32
//            ownership; a conditional's: u64 handle, u32 type, u32 size, at most
//            kMaxConditionalBodies); cudaGraphAddNode's head adds u8 edge data given and n edge
//            data records after the dependencies, and its reply u64 address after the node for an
//            allocation, u32 n and n u64 graphs for a conditional (its bodies, the node's).
//   cudaGraphConditionalHandleCreate (row 296)
//            u64 graph, u32 default launch value, u32 flags. Reply: i32 result, then on success
//            u64 handle.
//   cudaGraphDestroy (row 210)
//            u64 graph. Reply: i32 result.
//   cudaGraphKernelNodeGetAttribute, cudaGraphKernelNodeSetAttribute
//            u64 node, i32 attribute (its bits, any), then for the set form the value
//            (sizeof(cudaLaunchAttributeValue) bytes). The get reply: the value, on success.
// The queries of a graph's shape:
//   cudaGraphNodeGetDependencies, cudaGraphNodeGetDependentNodes
//            u64 node, u8 wanted (kShape* bits), u64 capacity. Reply: i32 result, u64 count, u32 n,
//            n u64 nodes, u8 edge data given, then n edge data records when given.
//   cudaGraphGetEdges
//            u64 graph, u8 wanted, u64 capacity. Reply: i32 result, u64 count, u32 n, n u64 from,
//            n u64 to, u8 edge data given, then n edge data records when given.
//   cudaGraphAddDependencies, cudaGraphRemoveDependencies
//            u64 graph, u32 n, n u64 from, n u64 to, u8 edge data given, n records when given.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <tuple>

#include "plugins/cudart/common/graph_wire.h"

namespace gvirtus::cudart {

// The most dependencies or edges one request names (as many as a reply carries).
inline constexpr uint64_t kMaxNodeEdges = kMaxGraphNodes;

// The most access descriptors a memory allocation node carries (one per device, at most).
inline constexpr uint32_t kMaxAccessDescs = 1024;

// The most bodies a conditional node has (a switch's cases; an if has two at most, a while one).
inline constexpr uint32_t kMaxConditionalBodies = 4096;

// Which of a shape query's outputs the caller gave.
inline constexpr uint8_t kShapeNodes = 1;  // the nodes array (for cudaGraphGetEdges: from and to)
inline constexpr uint8_t kShapeEdges = 2;  // the edge data array
inline constexpr uint8_t kShapeCount = 4;

struct NodeDims {
  uint32_t x, y, z;
};

struct KernelNodeWire {
  uint64_t kernel;  // the stub's kernel id, resolved in the session
  NodeDims grid;
  NodeDims block;
  uint32_t shared_bytes;
  static constexpr auto kFields = std::tuple{&KernelNodeWire::kernel, &KernelNodeWire::grid,
                                             &KernelNodeWire::block, &KernelNodeWire::shared_bytes};
};

struct MemsetNodeWire {
  uint64_t dst;
  uint64_t pitch;
  uint32_t value;
  uint32_t element_size;
  uint64_t width;
  uint64_t height;
  static constexpr auto kFields =
      std::tuple{&MemsetNodeWire::dst,          &MemsetNodeWire::pitch, &MemsetNodeWire::value,
                 &MemsetNodeWire::element_size, &MemsetNodeWire::width, &MemsetNodeWire::height};
};

// One side of a copy: a pitched pointer and a position in it.
struct CopySideWire {
  uint64_t ptr;
  uint64_t pitch;
  uint64_t xsize;
  uint64_t ysize;
  uint64_t x, y, z;
};

struct MemcpyNodeWire {
  CopySideWire src;
  CopySideWire dst;
  // The extent: along x in bytes, or in elements of the array taking part.
  uint64_t width, height, depth;
  cudaMemcpyKind kind;            // in its range: a record's enum outside it is malformed
  uint64_t src_array, dst_array;  // a side's CUDA array, else 0 (its pitched pointer copies)
  static constexpr auto kFields =
      std::tuple{&MemcpyNodeWire::src,       &MemcpyNodeWire::dst,      &MemcpyNodeWire::width,
                 &MemcpyNodeWire::height,    &MemcpyNodeWire::depth,    &MemcpyNodeWire::kind,
                 &MemcpyNodeWire::src_array, &MemcpyNodeWire::dst_array};
};

// How far from its pointer a copy side reaches over `depth` slices of `height` rows of `width`
// elements of `element` bytes (slices pitch * ysize apart; its position x in elements too, as
// the runtime counts both where an array takes part); nullopt when that overflows. Both sides vet
// the same extent.
inline std::optional<uint64_t> copy_side_extent(const CopySideWire& side, uint64_t width,
                                                uint64_t height, uint64_t depth,
                                                uint64_t element = 1) {
  if (width == 0 || height == 0 || depth == 0) return uint64_t{0};
  if (side.z > UINT64_MAX - depth || side.y > UINT64_MAX - height) return std::nullopt;
  // Each step stays below 2^128 as long as the previous one stayed below 2^64.
  const unsigned __int128 kLimit = UINT64_MAX;
  const unsigned __int128 slice = static_cast<unsigned __int128>(side.pitch) * side.ysize;
  if (slice > kLimit) return std::nullopt;
  unsigned __int128 end = slice * (side.z + depth - 1);
  if (end > kLimit) return std::nullopt;
  end += static_cast<unsigned __int128>(side.pitch) * (side.y + height - 1);
  if (end > kLimit) return std::nullopt;
  end += static_cast<unsigned __int128>(side.x) * element;
  if (end > kLimit) return std::nullopt;
  end += static_cast<unsigned __int128>(width) * element;
  if (end > kLimit) return std::nullopt;
  return static_cast<uint64_t>(end);
}

struct Memcpy1DNodeWire {
  uint64_t dst;
  uint64_t src;
  uint64_t count;
  cudaMemcpyKind kind;  // in its range: a record's enum outside it is malformed
  static constexpr auto kFields = std::tuple{&Memcpy1DNodeWire::dst, &Memcpy1DNodeWire::src,
                                             &Memcpy1DNodeWire::count, &Memcpy1DNodeWire::kind};
};

}  // namespace gvirtus::cudart

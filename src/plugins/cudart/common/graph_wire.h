// Stream capture and graphs on the wire (custom rows 202, 206, 212, 213 and 217 of
// cudart_calls.txt), for the stub (frontend/graphs.cpp) and the backend (backend/graphs.cpp).
// Handles travel as u64; graph nodes are the backend runtime's own values, which the stub hands out
// as they are.
//
//   cudaStreamGetCaptureInfo   u64 stream, u8 wanted (kCapture* bits: which of the caller's
//                              output pointers are not null), then the caller's values of
//                              i32 status, u64 id, u64 graph, u64 count (0 where not wanted).
//                              Reply: i32 result, then on success i32 status, u64 id, u64 graph,
//                              u64 count (as the runtime left them), u8 dependencies (kPointer*),
//                              u32 n and n u64 nodes, u8 edge data (kPointer*), u32 m and m edge
//                              data records (sizeof(cudaGraphEdgeData) bytes each); n and m at
//                              most kMaxGraphNodes.
//   cudaGraphInstantiateWithParams
//                              u8 executable wanted, u64 the caller's executable graph, u64
//                              graph, u8 parameters given, u64 flags, u64 upload stream, u64 error
//                              node, i32 instantiate result (the outputs as the caller left them).
//                              Reply: i32 result, u64 executable graph, u64 error node, i32
//                              instantiate result, always (as the runtime left them).
//   cudaGraphGetNodes, cudaGraphGetRootNodes
//                              u64 graph, u8 wanted (kNodes*), u64 capacity (the caller's count
//                              when it gives an array). Reply: i32 result, u64 count (what the
//                              runtime set), u32 n and n u64 nodes (n at most kMaxGraphNodes).
//   cudaGraphDebugDotPrint     u64 graph, u8 path given, u32 flags. Reply: i32 result, then on
//                              success a blob with the file the runtime wrote (at most
//                              kMaxDotBytes).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gvirtus::cudart {

// A handle as it travels (u64), and back.
template <typename T>
uint64_t wire_handle(T handle) {
  return reinterpret_cast<uint64_t>(handle);
}
template <typename T>
T handle_from_wire(uint64_t value) {
  return reinterpret_cast<T>(value);
}

// The most graph nodes one reply carries (a captured training step has thousands).
inline constexpr uint64_t kMaxGraphNodes = uint64_t{1} << 20;

// The largest DOT description that comes back (a larger one is cudaErrorNotSupported).
inline constexpr uint64_t kMaxDotBytes = uint64_t{64} << 20;

// cudaStreamGetCaptureInfo's outputs the caller asked for.
inline constexpr uint8_t kCaptureStatus = 1;
inline constexpr uint8_t kCaptureId = 2;
inline constexpr uint8_t kCaptureGraph = 4;
inline constexpr uint8_t kCaptureDependencies = 8;
inline constexpr uint8_t kCaptureEdges = 16;
inline constexpr uint8_t kCaptureCount = 32;

// What the runtime did with cudaStreamGetCaptureInfo's dependencies and edge data pointers.
inline constexpr uint8_t kPointerNull = 0;       // set it to null
inline constexpr uint8_t kPointerArray = 1;      // pointed it at an array (n or m entries follow)
inline constexpr uint8_t kPointerUntouched = 2;  // left it as the caller had it

// cudaGraphGetNodes's and cudaGraphGetRootNodes's pointers that are not null.
inline constexpr uint8_t kNodesArray = 1;
inline constexpr uint8_t kNodesCount = 2;

static_assert(sizeof(cudaGraphEdgeData) == 8, "cudaGraphEdgeData travels as 8 bytes");

}  // namespace gvirtus::cudart

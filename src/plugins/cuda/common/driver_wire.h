// The custom rows of cuda_calls.txt on the wire: each request starts with its record, defined
// once here for the stub and the backend (common/wire_record.h).
//
//   cuModuleLoadData      the image (below). Reply: i32 result, u8 ImageAnswer, then when
//                         kLoaded u64 module.
//   cuModuleLoadDataEx, cuLibraryLoadData  the image, the JIT options (jit_options.h), for a
//                         library u32 count and count times {u32 option, u64 value}. Reply: i32
//                         result, u8 ImageAnswer, then when kLoaded u64 handle and the JIT outputs.
//   a load's image        u8 ImageForm; kBytes: a blob, the module image (fatbinary, cubin or
//                         NUL-terminated PTX), its size found by the stub (module_image.h);
//                         kByHash: ImageByHash, the image's SHA-256 (common/content_hash.h) and
//                         size, for the backend's module cache to supply its bytes. The answer
//                         kUnknown (the cache lacks it) or kNoCache (the backend keeps none: the
//                         stub sends bytes from now on) means nothing was loaded and the stub
//                         sends the same request again with the bytes.
//   cuLaunchKernel        LaunchRequest, then a blob: the parameter buffer, packed by the
//                         kernel's layout. Reply (when waited for): i32 result.
//   cuLaunchKernelEx      LaunchRequest (the configuration's dimensions, memory and stream), then a
//                         blob of the configuration's attributes (CUlaunchAttribute, at most
//                         kMaxLaunchAttributes), then the parameter blob as above.
//   cuOccupancyMaxActiveClusters  LaunchRequest (function and configuration), then the blob of
//                         attributes. Reply: i32 result, i32 clusters (0 after a failure).
//   cuMemcpyHtoD(Async)   CopyRequest (device = destination), then `bytes` bytes of data, or
//                         none when the host side is in the shared memory (shared_offset).
//                         Reply: i32 result.
//   cuMemcpyDtoH(Async)   CopyRequest (device = source). Reply: i32 result, then a blob with the
//                         bytes (nothing after a failure), or nothing more when the host side is
//                         in the shared memory (the driver writes it there).
//   cuMemcpy2D(Unaligned|Async)  Copy2DRequest; host to device, then the rows' bytes packed
//                         (width x height, no gaps). Reply: i32 result; device to host, then
//                         a blob with the rows packed (nothing after a failure).
//   cuCtxCreate           u32 flags, i32 device (no creation parameters: the stub refuses
//                         them). Reply: i32 result, u64 context (null after a failure).
//   cuMemPoolSet/GetAttribute  PoolAttributeRequest (the value unused by Get). Reply: i32 result,
//                         then for Get the value as u64 (0 after a failure).
//   virtual memory        VirtualMemoryRequest (which fields each call uses: below). Reply: i32
//                         result, then for cuMemAddressReserve the address, for cuMemCreate and
//                         cuMemRetainAllocationHandle (address) the handle, for
//                         cuMemGetAllocationGranularity the granularity (u64 each, 0 after a
//                         failure).
//   cuModuleEnumerateFunctions, cuLibraryEnumerateKernels  EnumerateRequest. Reply: i32 result,
//                         then u32 n and n u64 handles (nothing after a failure).
//   cuFuncGetName, cuKernelGetName  u64 handle. Reply: i32 result, then the name as a string
//                         (nothing after a failure).
//   cuLinkCreate          the link's JIT options (common/jit_options.h). Reply: i32 result, u64
//                         state (null after a failure), the options' outputs.
//   cuLinkAddData         LinkInputRequest, a blob (the input's bytes), a string (its name), the
//                         input's own JIT options. Reply: i32 result, the input options' outputs,
//                         then the link's options' outputs (its logs so far).
//   cuLinkComplete        u64 state. Reply: i32 result, a blob (the linked image; empty after a
//                         failure), then the link's options' outputs (the error log says why).
//   cuLinkDestroy         u64 state. Reply: i32 result.
//   cuMemcpyHtoA(Async)   ArrayCopyRequest, then `bytes` bytes of data. Reply: i32 result.
//   cuMemcpyAtoH(Async)   ArrayCopyRequest. Reply: i32 result, then a blob with the bytes
//                         (nothing after a failure).
//   cuStreamSet/GetAttribute  StreamAttributeRequest (the value unused by Get). Reply: i32
//                         result, then for Get the value (zeroed after a failure).
//   cuMemcpy3D(Async)     ArrayBoxRequest (a copy with a CUDA array on either side; the stub
//                         copies the others as 2D slices); host to array, then the host side's
//                         bytes packed (width x height x depth, no gaps). Reply: i32 result;
//                         array to host, then a blob with the bytes packed (nothing after a
//                         failure).
//   cuTexObjectCreate     u32 view (0 or 1), then the bytes of the resource descriptor, the
//                         texture descriptor and, with view 1, the resource view descriptor.
//                         Reply: i32 result, u64 object (0 after a failure).
//   cuSurfObjectCreate    the resource descriptor's bytes. Reply: i32 result, u64 object.
//   cuTexObjectDestroy, cuSurfObjectDestroy  u64 object. Reply: i32 result.
//   cuTexObjectGet(Resource|Texture|ResourceView)Desc, cuSurfObjectGetResourceDesc  u64 object.
//                         Reply: i32 result, then the descriptor's bytes (zeroed after a failure).
//   cuMipmappedArrayGetLevel  u64 mipmapped array, u32 level. Reply: i32 result, u64 array.
//   cuMipmappedArrayDestroy, cuArrayDestroy  u64 handle. Reply: i32 result.
//   cuMemPoolCreate       PoolCreateRequest. Reply: i32 result, u64 pool (null after a failure).
//   cuMemHostRegister     SharedHostRequest (whole pages of the shared memory). Reply: i32
//                         result, u64 device pointer (0 after a failure).
//   cuMemHostUnregister   u64 offset (of a registered block). Reply: i32 result.
//   cuGraphGetNodes, cuGraphGetRootNodes
//                         u64 graph, u64 capacity (the caller's array; 0: no array, the count
//                         alone). Reply: i32 result, u64 count (what the driver set: the graph's
//                         nodes, or those written), then with an array u32 n and n u64 nodes
//                         (n = the count, at most kMaxGraphNodes; nothing after a failure but
//                         the zero count and n).
//   cuStreamGetCaptureInfo_v3  u64 stream, u8 wanted (graph_node_wire.h's kShapeNodes: the
//                         dependencies; kShapeEdges: their edge data). Reply: i32 result, then on
//                         success u32 status (CUstreamCaptureStatus); while capturing, u64 the
//                         capture's id, u64 its graph, u64 count (the driver's), u32 n (at most
//                         kMaxGraphNodes; 0 unless the dependencies were wanted) and n u64
//                         nodes, u8 edge data given, then n CUgraphEdgeData when given.
//   cuGraphInstantiateWithParams  u64 graph, u64 flags, u64 upload stream. Reply: i32 result,
//                         u64 executable graph (null after a failure), i32 the instantiation's
//                         result (CUgraphInstantiateResult), u64 the node it failed at (the
//                         driver's; null when none).
//   cuGraphDebugDotPrint  u64 graph, u32 flags. Reply: i32 result, then a blob: the DOT text the
//                         backend's driver wrote (at most kMaxDotBytes; empty after a failure),
//                         which the stub writes at the caller's path.
//   cuIpcOpenMemHandle_v2 the handle's bytes (CUipcMemHandle), u32 flags. Reply: i32 result, u64
//                         device pointer, u64 bytes of the opened allocation (both 0 after a
//                         failure; bytes 0 when the driver cannot say).
//   cuIpcCloseMemHandle   u64 device pointer (one this session opened). Reply: i32 result.
//   cuStreamBatchMemOp_v2 u64 stream, u32 flags, u32 count (at most kMaxBatchMemOps), then count
//                         MemOpRecords. Reply: i32 result (sent ahead: reported later).
// The synchronous copies carry a null stream; a stream on them is malformed. Copies larger than
// kCopyChunkBytes travel as several calls, so no frame approaches the frame limit.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <tuple>

#include "common/content_hash.h"

namespace gvirtus::cuda {

inline constexpr size_t kCopyChunkBytes = size_t{16} << 20;
// The largest module image either side accepts (NVIDIA's largest fatbinaries are a few hundred
// MiB; a size field claiming more is a lie).
inline constexpr uint64_t kMaxModuleImageBytes = uint64_t{1} << 30;
// The most nodes one cuGraphGetNodes reply carries (a captured training step has thousands).
inline constexpr uint64_t kMaxGraphNodes = uint64_t{1} << 20;
// The largest DOT description of a graph one reply carries (a node is a few hundred bytes).
inline constexpr uint64_t kMaxDotBytes = uint64_t{64} << 20;
// The largest parameter buffer a launch takes (CUDA 12.1 raised the limit to 32764 bytes).
inline constexpr uint64_t kMaxParamBytes = 32764;
// The most attributes a launch configuration carries (the driver knows 16 kinds; a repeated one
// is legal, so some slack).
inline constexpr uint32_t kMaxLaunchAttributes = 32;

// How a load request carries its module image (above). Every image goes by hash first, however
// small: a library such as cuBLAS loads thousands of images of a few KiB, together megabytes
// that a second run need not send (a miss costs a round trip more on the first run).
enum : uint8_t { kImageBytes = 0, kImageByHash = 1 };
struct ImageByHash {
  ContentHash hash;
  uint64_t size;
  static constexpr auto kFields = std::tuple{&ImageByHash::hash, &ImageByHash::size};
};
// What the backend did with a load's image.
enum : uint8_t { kImageLoaded = 0, kImageUnknown = 1, kImageNoCache = 2 };

struct LaunchRequest {
  CUfunction function;
  uint32_t grid_x, grid_y, grid_z;
  uint32_t block_x, block_y, block_z;
  uint32_t shared_bytes;
  CUstream stream;
  static constexpr auto kFields =
      std::tuple{&LaunchRequest::function, &LaunchRequest::grid_x,       &LaunchRequest::grid_y,
                 &LaunchRequest::grid_z,   &LaunchRequest::block_x,      &LaunchRequest::block_y,
                 &LaunchRequest::block_z,  &LaunchRequest::shared_bytes, &LaunchRequest::stream};
};

// A kernel's whole parameter layout in one round trip (gvirtusKernelParamLayout, gvirtus's own
// call): the request names a function or a library's kernel (the backend tells which by the
// session's handles); the reply is the status, a u32 count (0 on failure) and that many ParamSlot
// records, by ordinal.
struct ParamLayoutRequest {
  CUfunction function;
  static constexpr auto kFields = std::tuple{&ParamLayoutRequest::function};
};
struct ParamSlot {
  uint32_t offset, size;
  static constexpr auto kFields = std::tuple{&ParamSlot::offset, &ParamSlot::size};
};
// The most parameters a layout holds: each takes at least one byte of kMaxParamBytes.
inline constexpr uint32_t kMaxParams = static_cast<uint32_t>(kMaxParamBytes);

// A copy's host side: its bytes travel (kInlineHost: in chunks of at most kCopyChunkBytes), or
// it is page-locked memory in the memory shared with the backend, which the backend registered
// (a cuMemAllocHost or cuMemHostAlloc block): then shared_offset is its place there, no bytes
// travel, the copy has any size within the block, and the driver's copy engine reads or writes
// those very pages, asynchronously when the copy is.
inline constexpr uint64_t kInlineHost = ~uint64_t{0};

// One operation of a cuStreamBatchMemOp batch: its CUstreamBatchMemOpType, the device word of a
// wait or write (0 for the others), the value (a 32-bit one in the low half) and the operation's
// flags.
struct MemOpRecord {
  uint32_t operation;
  CUdeviceptr address;
  uint64_t value;
  uint32_t flags;
  static constexpr auto kFields = std::tuple{&MemOpRecord::operation, &MemOpRecord::address,
                                             &MemOpRecord::value, &MemOpRecord::flags};
};
// The most operations one batch carries (the driver's own limit is lower: it refuses the rest).
inline constexpr uint32_t kMaxBatchMemOps = 4096;

struct CopyRequest {
  CUdeviceptr device;
  uint64_t bytes;
  CUstream stream;
  uint64_t shared_offset = kInlineHost;
  static constexpr auto kFields = std::tuple{&CopyRequest::device, &CopyRequest::bytes,
                                             &CopyRequest::stream, &CopyRequest::shared_offset};
};

// A 2D copy between a device range and the client's memory, or between two device ranges (the
// host side's pitch stays in the stub: its rows travel packed). At most kCopyChunkBytes of rows
// per request when a host side is involved; the stub sends taller copies as several.
enum class Copy2DDirection : uint32_t { kHostToDevice = 1, kDeviceToHost = 2, kDeviceToDevice = 3 };

struct Copy2DRequest {
  uint32_t direction;  // a Copy2DDirection, checked by the backend
  CUdeviceptr dst;
  uint64_t dst_pitch;  // device destinations only
  CUdeviceptr src;
  uint64_t src_pitch;  // device sources only
  uint64_t width;      // bytes per row
  uint64_t height;     // rows
  CUstream stream;
  static constexpr auto kFields =
      std::tuple{&Copy2DRequest::direction, &Copy2DRequest::dst,       &Copy2DRequest::dst_pitch,
                 &Copy2DRequest::src,       &Copy2DRequest::src_pitch, &Copy2DRequest::width,
                 &Copy2DRequest::height,    &Copy2DRequest::stream};
};

// The virtual memory management calls (common/virtual_ranges.h says what both sides keep):
//   cuMemAddressReserve   bytes, alignment, address (the hint), flags
//   cuMemAddressFree      address, bytes
//   cuMemCreate           bytes, flags, then the CUmemAllocationProp's bytes (its Windows
//                         pointer is the backend's to clear)
//   cuMemRelease          handle
//   cuMemMap              address, bytes, offset (in alignment), handle, flags
//   cuMemUnmap            address, bytes
//   cuMemSetAccess        address, bytes, then a blob of CUmemAccessDesc
//   cuMemGetAllocationGranularity  flags (the option), then the CUmemAllocationProp's bytes
struct VirtualMemoryRequest {
  CUdeviceptr address;
  uint64_t bytes;
  uint64_t alignment;  // cuMemAddressReserve's alignment, or cuMemMap's offset
  uint64_t handle;     // a CUmemGenericAllocationHandle
  uint64_t flags;
  static constexpr auto kFields =
      std::tuple{&VirtualMemoryRequest::address, &VirtualMemoryRequest::bytes,
                 &VirtualMemoryRequest::alignment, &VirtualMemoryRequest::handle,
                 &VirtualMemoryRequest::flags};
};

// Shareable handles (rows 288-293) travel as src/common/shareable_token.h's ShareableRequest.
// cuMemPoolExportPointer sends the address; its reply is the status and a blob of the driver's
// export data (empty after a failure). cuMemPoolImportPointer sends the pool and that blob; its
// reply is the status, the address and its allocation's size.

// A memory pool attribute: the reuse flags are ints (0 or 1), the rest 64-bit integers; either
// travels as u64.
struct PoolAttributeRequest {
  CUmemoryPool pool;
  uint32_t attribute;  // a CUmemPool_attribute, checked by the backend
  uint64_t value;
  static constexpr auto kFields = std::tuple{
      &PoolAttributeRequest::pool, &PoolAttributeRequest::attribute, &PoolAttributeRequest::value};
};

// A module's functions or a library's kernels: which one, and how many handles the caller has
// room for (at most kMaxEnumerated; the driver returns at most that many).
struct EnumerateRequest {
  uint64_t handle;  // the CUmodule or CUlibrary
  uint32_t count;
  static constexpr auto kFields = std::tuple{&EnumerateRequest::handle, &EnumerateRequest::count};
};
// The most handles one enumeration returns (cuBLAS's largest modules hold a few thousand kernels).
inline constexpr uint32_t kMaxEnumerated = uint32_t{1} << 16;
// The longest kernel name either side passes on (mangled template names run to a few KiB).
inline constexpr uint64_t kMaxKernelNameBytes = uint64_t{1} << 16;

// One input of a link: its state and its type (a CUjitInputType; the backend refuses others).
struct LinkInputRequest {
  uint64_t state;  // the CUlinkState
  uint32_t type;
  static constexpr auto kFields = std::tuple{&LinkInputRequest::state, &LinkInputRequest::type};
};
// The longest name a link input carries (the driver uses it in its messages only).
inline constexpr uint64_t kMaxLinkInputNameBytes = 4096;

// A block of the transport's shared memory (shm's arena) to register with the GPU: where it
// starts, its size (whole pages) and cuMemHostAlloc's flags. Both sides name it by its offset
// (the two processes map the memory at different addresses).
struct SharedHostRequest {
  uint64_t offset;
  uint64_t bytes;
  uint32_t flags;
  static constexpr auto kFields =
      std::tuple{&SharedHostRequest::offset, &SharedHostRequest::bytes, &SharedHostRequest::flags};
};
inline constexpr uint64_t kSharedHostPage = 4096;

// A direct copy between two backends of a client's pool (docs/cluster.md, backend/peer_copies.h):
// the destination's backend opens a listening socket for it (PeerReceiveOpen: the range it will
// write, answered with the port and a token of 32 random bytes), the source's connects there and
// sends the token, the byte count and the bytes (PeerSend, with the destination's host), and the
// destination's takes them in (PeerReceive, naming the token) while the source sends.
struct PeerToken {
  uint64_t w0, w1, w2, w3;
  bool operator==(const PeerToken&) const = default;
  static constexpr auto kFields =
      std::tuple{&PeerToken::w0, &PeerToken::w1, &PeerToken::w2, &PeerToken::w3};
};
struct PeerReceiveOpenRequest {
  CUdeviceptr device;
  uint64_t bytes;
  static constexpr auto kFields =
      std::tuple{&PeerReceiveOpenRequest::device, &PeerReceiveOpenRequest::bytes};
};
struct PeerSendRequest {
  CUdeviceptr device;
  uint64_t bytes;
  uint32_t port;
  static constexpr auto kFields =
      std::tuple{&PeerSendRequest::device, &PeerSendRequest::bytes, &PeerSendRequest::port};
};  // then the token, then the destination's host as a string of at most kMaxPeerHost bytes
inline constexpr size_t kMaxPeerHost = 255;

// A memory pool's properties (CUmemPoolProps but its Windows security pointer, which names the
// client's memory, and its reserved bytes).
struct PoolCreateRequest {
  uint32_t alloc_type;    // a CUmemAllocationType
  uint32_t handle_types;  // CUmemAllocationHandleType bits: a POSIX descriptor, a fabric handle
  int32_t location_type;  // a CUmemLocationType
  int32_t location_id;
  uint64_t max_size;
  uint32_t usage;  // an unsigned short in the properties
  static constexpr auto kFields =
      std::tuple{&PoolCreateRequest::alloc_type,    &PoolCreateRequest::handle_types,
                 &PoolCreateRequest::location_type, &PoolCreateRequest::location_id,
                 &PoolCreateRequest::max_size,      &PoolCreateRequest::usage};
};

// A copy between the client's memory and a CUDA array, at a byte offset in the array (the
// synchronous copies carry a null stream). At most kCopyChunkBytes a request.
struct ArrayCopyRequest {
  CUarray array;
  uint64_t offset;
  uint64_t bytes;
  CUstream stream;
  static constexpr auto kFields = std::tuple{&ArrayCopyRequest::array, &ArrayCopyRequest::offset,
                                             &ArrayCopyRequest::bytes, &ArrayCopyRequest::stream};
};

// What one side of an ArrayBoxRequest is: the client's memory (packed on the wire: its x, y
// and z are 0, its pitch the width and its height the box's), device memory, or a CUDA array.
// kUnified is device memory named by a unified address (CU_MEMORYTYPE_UNIFIED), only on a graph's
// copy node: vetted as device memory, and given to the driver as the program named it, since new
// parameters in an executable graph may not change a copy node's memory types.
enum class BoxSide : uint32_t { kHost = 1, kDevice = 2, kArray = 3, kUnified = 4 };

// A box (width bytes x height rows x depth slices) copied between two sides, at least one an
// array, at most one the client's memory (at most kCopyChunkBytes of it a request). Each side's
// corner is at (x bytes, y rows, z slices); device memory's rows are pitch bytes apart and its
// slices height rows. The synchronous copy carries a null stream.
struct ArrayBoxRequest {
  uint32_t src_side;  // a BoxSide, checked by the backend
  CUdeviceptr src_device;
  CUarray src_array;
  uint64_t src_x, src_y, src_z, src_pitch, src_height;
  uint32_t dst_side;
  CUdeviceptr dst_device;
  CUarray dst_array;
  uint64_t dst_x, dst_y, dst_z, dst_pitch, dst_height;
  uint64_t width, height, depth;
  CUstream stream;
  static constexpr auto kFields = std::tuple{
      &ArrayBoxRequest::src_side,   &ArrayBoxRequest::src_device, &ArrayBoxRequest::src_array,
      &ArrayBoxRequest::src_x,      &ArrayBoxRequest::src_y,      &ArrayBoxRequest::src_z,
      &ArrayBoxRequest::src_pitch,  &ArrayBoxRequest::src_height, &ArrayBoxRequest::dst_side,
      &ArrayBoxRequest::dst_device, &ArrayBoxRequest::dst_array,  &ArrayBoxRequest::dst_x,
      &ArrayBoxRequest::dst_y,      &ArrayBoxRequest::dst_z,      &ArrayBoxRequest::dst_pitch,
      &ArrayBoxRequest::dst_height, &ArrayBoxRequest::width,      &ArrayBoxRequest::height,
      &ArrayBoxRequest::depth,      &ArrayBoxRequest::stream};
};

// A stream's attribute: which, and its value (CUstreamAttrValue's bytes).
struct StreamAttributeRequest {
  CUstream stream;
  uint32_t attribute;  // a CUstreamAttrID
  static constexpr auto kFields =
      std::tuple{&StreamAttributeRequest::stream, &StreamAttributeRequest::attribute};
};

// Whether an attribute is one the driver takes for streams (the launch attributes' other kinds
// are for launches and graph nodes; some of them carry event handles).
inline bool stream_attribute(uint32_t attribute) {
  switch (attribute) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      return true;
    default:
      return false;
  }
}

// Whether a pool attribute's value is an int (else a cuuint64_t).
inline bool pool_attribute_is_int(uint32_t attribute) {
  return attribute >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
         attribute <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

// The most access descriptors one cuMemSetAccess takes (one per device and the host, with room).
inline constexpr uint64_t kMaxAccessDescriptors = 64;

}  // namespace gvirtus::cuda

// Copies between a CUDA array and linear memory, and 3D copies, on the wire (custom rows 165-168
// and 177-180 of cudart_calls.txt), defined once here for the stub and the backend
// (common/wire_record.h).
//
//   cudaMemcpy2DToArray(Async)      ArrayCopyRequest, then for host-to-device the rows packed
//                                   (width bytes each). Reply: i32 result.
//   cudaMemcpy2DFromArray(Async)    ArrayCopyRequest. Reply: i32 result, then for device-to-host a
//                                   blob with the rows packed (nothing after a failure).
//
// The deprecated 1D forms (cudaMemcpyToArray, cudaMemcpyFromArray and their Async) travel on the
// same rows with `linear_bytes` set: `width` bytes from the array's (w_offset, h_offset) onwards in
// its row order, one row on the wire; the backend calls the 1D function.
//
// `linear` is the linear side when it is device memory (device-to-device: vetted on the backend),
// and null when it is host memory: its bytes travel instead. Any other kind travels with a null
// linear side, for the runtime to refuse. The synchronous rows carry a null stream.
// Copies larger than kMemcpyChunkBytes travel as several calls of whole rows (1D: of bytes).
//
//   cudaMemcpy3D(Async), cudaMemcpy3DPeer(Async)
//                                   Memcpy3DRequest, then for a host source its rows packed
//                                   (host_row_bytes each, height rows per slice, depth slices).
//                                   Reply: i32 result, then for a host destination a blob with
//                                   its rows packed (nothing after a failure).
// Each side is an array, or a pitched pointer with its position (x in bytes). A host side travels
// as bytes: its pointer is null on the wire and its position 0; host_row_bytes is the length of
// its rows (the extent's width in elements of the array on the other side, or in bytes), which
// the backend checks against its own reading of the array. The peer forms name both devices and
// have no host side; the others carry -1 there.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <tuple>

namespace gvirtus::cudart {

// The bytes one element of `desc` takes, or 0 for a format without whole-byte elements
// (block-compressed, planar) or a malformed one. Both sides count a copy's bytes with it.
inline uint64_t channel_element_bytes(const cudaChannelFormatDesc& desc) {
  if (desc.x < 0 || desc.y < 0 || desc.z < 0 || desc.w < 0) return 0;
  const int64_t bits = int64_t{desc.x} + desc.y + desc.z + desc.w;
  if (bits <= 0 || bits % 8 != 0) return 0;
  return static_cast<uint64_t>(bits / 8);
}

struct ArrayCopyRequest {
  cudaArray_t array;      // the destination (To rows) or the source (From rows)
  uint64_t w_offset;      // bytes into the array's rows
  uint64_t h_offset;      // rows into the array
  void* linear;           // the device side, or null (see above)
  uint64_t pitch;         // the device side's pitch; the host side's rows travel packed
  uint64_t width;         // bytes per row (1D: the count)
  uint64_t height;        // rows (1D: 1)
  uint32_t linear_bytes;  // 1 for the 1D forms
  cudaMemcpyKind kind;
  cudaStream_t stream;
  static constexpr auto kFields = std::tuple{
      &ArrayCopyRequest::array,  &ArrayCopyRequest::w_offset,     &ArrayCopyRequest::h_offset,
      &ArrayCopyRequest::linear, &ArrayCopyRequest::pitch,        &ArrayCopyRequest::width,
      &ArrayCopyRequest::height, &ArrayCopyRequest::linear_bytes, &ArrayCopyRequest::kind,
      &ArrayCopyRequest::stream};
};

struct Memcpy3DRequest {
  cudaArray_t src_array;
  uint64_t src_x, src_y, src_z;
  void* src_ptr;
  uint64_t src_pitch, src_xsize, src_ysize;
  int32_t src_device;
  cudaArray_t dst_array;
  uint64_t dst_x, dst_y, dst_z;
  void* dst_ptr;
  uint64_t dst_pitch, dst_xsize, dst_ysize;
  int32_t dst_device;
  uint64_t width, height, depth;
  uint64_t host_row_bytes;  // 0 without a host side
  cudaMemcpyKind kind;
  cudaStream_t stream;
  static constexpr auto kFields = std::tuple{
      &Memcpy3DRequest::src_array,      &Memcpy3DRequest::src_x,     &Memcpy3DRequest::src_y,
      &Memcpy3DRequest::src_z,          &Memcpy3DRequest::src_ptr,   &Memcpy3DRequest::src_pitch,
      &Memcpy3DRequest::src_xsize,      &Memcpy3DRequest::src_ysize, &Memcpy3DRequest::src_device,
      &Memcpy3DRequest::dst_array,      &Memcpy3DRequest::dst_x,     &Memcpy3DRequest::dst_y,
      &Memcpy3DRequest::dst_z,          &Memcpy3DRequest::dst_ptr,   &Memcpy3DRequest::dst_pitch,
      &Memcpy3DRequest::dst_xsize,      &Memcpy3DRequest::dst_ysize, &Memcpy3DRequest::dst_device,
      &Memcpy3DRequest::width,          &Memcpy3DRequest::height,    &Memcpy3DRequest::depth,
      &Memcpy3DRequest::host_row_bytes, &Memcpy3DRequest::kind,      &Memcpy3DRequest::stream};
};

}  // namespace gvirtus::cudart

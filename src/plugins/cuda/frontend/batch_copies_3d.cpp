// cuMemcpy3DBatchAsync: a batch of 3D copies between pointers and CUDA arrays in one stream. The
// stub runs each as the cuMemcpy3DAsync it describes (copies_3d.h: slices, boxes, chunks), in the
// order listed (CUDA promises no order within a batch). CUDA 13's form is
// cuMemcpy3DBatchAsync_v2; CUDA 12.8's also says which copy failed (failIdx).
//
// An operation's extent is in elements: bytes between two pointers, the array's elements when an
// array takes part (the stub asks the backend for the array's descriptor: formats of whole-byte
// elements only, CUDA_ERROR_NOT_SUPPORTED for the others). A pointer operand's row length and
// layer height are in elements too, 0 meaning tightly packed; a pointer is a unified address
// (device memory the stub knows, else the client's memory). The batch and each operation are
// vetted as the driver vets them: operand types, a non-zero extent, row length and layer height
// 0 or at least the extent's, a known source access order and flags, no batch flags, not the
// legacy stream (CUDA_ERROR_INVALID_VALUE). A copy whose source must be read during the call
// (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) makes the call wait for the stream before it
// returns; location hints are ignored, as in cuMemcpyBatchAsync.
#include <cuda.h>

#include <cstdint>

#include "common/batch_copies.h"
#include "plugins/cuda/common/array_formats.h"
#include "plugins/cuda/frontend/copies_3d.h"
#include "plugins/cuda/frontend/per_thread.h"

namespace gvirtus::cuda {
namespace {

constexpr size_t kNoCopy = SIZE_MAX;  // failIdx when the failure is not one copy's
static_assert(CU_MEMCPY_OPERAND_TYPE_POINTER == batch::kOperandPointer &&
              CU_MEMCPY_OPERAND_TYPE_ARRAY == batch::kOperandArray);

// The bytes of one element of `array`, 0 for a format without whole-byte elements.
CUresult element_bytes(CUarray array, size_t& bytes) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  if (const CUresult r = cuArray3DGetDescriptor_v2(&d, array); r != CUDA_SUCCESS) return r;
  const size_t channel = channel_bytes(d.Format);
  if (channel == 0) return CUDA_ERROR_NOT_SUPPORTED;
  bytes = channel * d.NumChannels;
  return CUDA_SUCCESS;
}

// One side of the CUDA_MEMCPY3D an operation describes.
void set_side(const CUmemcpy3DOperand& o, const CUextent3D& extent, size_t element,
              CUmemorytype& type, CUdeviceptr& device, CUarray& array, size_t& x, size_t& y,
              size_t& z, size_t& pitch, size_t& height) {
  if (o.type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
    type = CU_MEMORYTYPE_ARRAY;
    array = o.op.array.array;
    x = o.op.array.offset.x * element;
    y = o.op.array.offset.y;
    z = o.op.array.offset.z;
    return;
  }
  type = CU_MEMORYTYPE_UNIFIED;
  device = o.op.ptr.ptr;
  pitch = (o.op.ptr.rowLength != 0 ? o.op.ptr.rowLength : extent.width) * element;
  height = o.op.ptr.layerHeight != 0 ? o.op.ptr.layerHeight : extent.height;
}

CUresult copy_op(const CUDA_MEMCPY3D_BATCH_OP& op, CUstream stream) {
  size_t element = 1, other = 0;
  const bool src_array = op.src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
  const bool dst_array = op.dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
  if (src_array) {
    if (const CUresult r = element_bytes(op.src.op.array.array, element); r != CUDA_SUCCESS) {
      return r;
    }
  }
  if (dst_array) {
    if (const CUresult r = element_bytes(op.dst.op.array.array, other); r != CUDA_SUCCESS) {
      return r;
    }
    if (src_array && other != element) return CUDA_ERROR_INVALID_VALUE;  // must match
    element = other;
  }
  CUDA_MEMCPY3D copy{};
  set_side(op.src, op.extent, element, copy.srcMemoryType, copy.srcDevice, copy.srcArray,
           copy.srcXInBytes, copy.srcY, copy.srcZ, copy.srcPitch, copy.srcHeight);
  set_side(op.dst, op.extent, element, copy.dstMemoryType, copy.dstDevice, copy.dstArray,
           copy.dstXInBytes, copy.dstY, copy.dstZ, copy.dstPitch, copy.dstHeight);
  copy.WidthInBytes = op.extent.width * element;
  copy.Height = op.extent.height;
  copy.Depth = op.extent.depth;
  return copy_3d(&copy, stream, true);
}

CUresult batch_copies_3d(size_t count, CUDA_MEMCPY3D_BATCH_OP* ops, size_t* fail_idx,
                         unsigned long long flags, CUstream stream) {
  if (fail_idx != nullptr) *fail_idx = kNoCopy;
  if (count == 0 || ops == nullptr || flags != 0 || stream == nullptr ||
      stream == CU_STREAM_LEGACY) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (size_t i = 0; i < count; ++i) {
    if (!batch::valid_3d_operation(ops[i], CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)) {
      if (fail_idx != nullptr) *fail_idx = i;
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  bool wait = false;
  for (size_t i = 0; i < count; ++i) {
    if (const CUresult r = copy_op(ops[i], stream); r != CUDA_SUCCESS) {
      if (fail_idx != nullptr) *fail_idx = i;
      return r;
    }
    wait = wait || batch::read_during_call(ops[i]);
  }
  return wait ? cuStreamSynchronize(stream) : CUDA_SUCCESS;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

// cuda.h declares CUDA 12.8's forms only for the driver's own build (its cuMemcpy3DBatchAsync is
// a macro for the _v2 otherwise); these are their ABIs.
#undef cuMemcpy3DBatchAsync
extern "C" {
CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx,
                              unsigned long long flags, CUstream hStream);
CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx,
                                   unsigned long long flags, CUstream hStream);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy3DBatchAsync_v2(
    size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, unsigned long long flags, CUstream hStream) {
  return cr::batch_copies_3d(numOps, opList, nullptr, flags, hStream);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy3DBatchAsync(
    size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx, unsigned long long flags,
    CUstream hStream) {
  return cr::batch_copies_3d(numOps, opList, failIdx, flags, hStream);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy3DBatchAsync_ptsz(
    size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx, unsigned long long flags,
    CUstream hStream) {
  return cr::batch_copies_3d(numOps, opList, failIdx, flags, cr::per_thread(hStream));
}

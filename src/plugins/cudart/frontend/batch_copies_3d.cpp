// cudaMemcpy3DBatchAsync: a batch of 3D copies between pointers and CUDA arrays in one stream.
// The stub runs each as the cudaMemcpy3DAsync it describes (memcpy_3d.cpp: packed host rows,
// chunks, arrays), with cudaMemcpyDefault, in the order listed (CUDA promises no order within a
// batch).
//
// An operation's extent is in elements: bytes between two pointers, the array's elements when an
// array takes part (its element size asked of the backend: array_info.h). A pointer operand's row
// length and layer height are in elements too, 0 meaning tightly packed. The whole batch is vetted
// first, as the runtime vets it: operand types, a non-zero extent, row length and layer height 0
// or at least the extent's, a known source access order and flags (common/batch_copies.h), no
// batch flags, not the legacy stream (cudaErrorInvalidValue). A copy whose source must be read
// during the call (cudaMemcpySrcAccessOrderDuringApiCall) makes the call wait for the stream
// before it returns; location hints are ignored, as in cudaMemcpyBatchAsync.
#include "common/batch_copies.h"
#include "plugins/cudart/frontend/array_info.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

static_assert(cudaMemcpyOperandTypePointer == batch::kOperandPointer &&
              cudaMemcpyOperandTypeArray == batch::kOperandArray);

// One side of the cudaMemcpy3DParms an operation describes: an array at its offset, or a pitched
// pointer whose copy starts at its first byte.
void set_side(const cudaMemcpy3DOperand& o, const cudaExtent& extent, size_t element,
              cudaArray_t& array, cudaPos& pos, cudaPitchedPtr& ptr) {
  if (o.type == cudaMemcpyOperandTypeArray) {
    array = o.op.array.array;
    pos = cudaPos{o.op.array.offset.x, o.op.array.offset.y, o.op.array.offset.z};
    return;
  }
  const size_t row = o.op.ptr.rowLength != 0 ? o.op.ptr.rowLength : extent.width;
  const size_t layer = o.op.ptr.layerHeight != 0 ? o.op.ptr.layerHeight : extent.height;
  ptr = cudaPitchedPtr{o.op.ptr.ptr, row * element, row, layer};
}

cudaError_t copy_op(const cudaMemcpy3DBatchOp& op, cudaStream_t stream) {
  size_t element = 1;
  for (const cudaMemcpy3DOperand* o : {&op.src, &op.dst}) {
    if (o->type != cudaMemcpyOperandTypeArray) continue;
    size_t bytes = 0;
    if (const cudaError_t rc = array_element_bytes(o->op.array.array, bytes); rc != cudaSuccess) {
      return rc;  // the backend's answer, recorded there as the last error
    }
    if (bytes == 0) return record_local_error(cudaErrorNotSupported);  // no whole-byte elements
    if (element != 1 && bytes != element) return record_local_error(cudaErrorInvalidValue);
    element = bytes;
  }
  cudaMemcpy3DParms p{};
  set_side(op.src, op.extent, element, p.srcArray, p.srcPos, p.srcPtr);
  set_side(op.dst, op.extent, element, p.dstArray, p.dstPos, p.dstPtr);
  p.extent = op.extent;  // elements of the array, or bytes between pointers: as cudaMemcpy3D's
  p.kind = cudaMemcpyDefault;
  return cudaMemcpy3DAsync(&p, stream);
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy3DBatchAsync(size_t numOps, cudaMemcpy3DBatchOp* opList,
                                                         unsigned long long flags,
                                                         cudaStream_t stream) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) return init;
  if (numOps == 0 || opList == nullptr || flags != 0 || stream == nullptr ||
      stream == cudaStreamLegacy) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  for (size_t i = 0; i < numOps; ++i) {
    if (!gvirtus::batch::valid_3d_operation(opList[i], cudaMemcpyFlagPreferOverlapWithCompute)) {
      return cr::record_local_error(cudaErrorInvalidValue);
    }
  }
  bool wait = false;
  for (size_t i = 0; i < numOps; ++i) {
    if (const cudaError_t rc = cr::copy_op(opList[i], stream); rc != cudaSuccess) return rc;
    wait = wait || gvirtus::batch::read_during_call(opList[i]);
  }
  return wait ? cudaStreamSynchronize(stream) : cudaSuccess;
}

// The per-thread default stream's form: a null stream is the calling thread's own.
GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps,
                                                              cudaMemcpy3DBatchOp* opList,
                                                              unsigned long long flags,
                                                              cudaStream_t stream) {
  return cudaMemcpy3DBatchAsync(numOps, opList, flags,
                                stream == nullptr ? cudaStreamPerThread : stream);
}

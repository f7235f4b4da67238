// cuMemcpyBatchAsync: a batch of copies between unified addresses in one stream. CUDA orders the
// batch as a whole in the stream and the copies within it in no order it promises; the stub runs
// them in the order listed, each as cuMemcpyAsync would (copies.cpp: the shared memory, chunks,
// copies between a pool's backends). CUDA 13's form is cuMemcpyBatchAsync_v2; CUDA 12.8's,
// still asked for by the runtimes built for it, also says which copy failed (failIdx).
//
// The attributes are vetted as the driver vets them (common/batch_copies.h), with the same rules
// as the runtime stub's cudaMemcpyBatchAsync. Their location hints concern managed and
// pageable-access memory, which the backend's GPU does not reach from here, and are ignored as
// CUDA ignores them for other memory. CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL promises that
// the sources were read when the call returns: the stub reads client memory when a copy is made
// anyway, and for a source the backend reads in stream order (device memory, page-locked memory
// shared with the backend) the call waits for the stream before it returns.
#include <cuda.h>

#include <cstdint>

#include "common/batch_copies.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/per_thread.h"

namespace gvirtus::cuda {
namespace {

static_assert(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM == batch::kOrderStream &&
              CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL == batch::kOrderDuringApiCall &&
              CU_MEMCPY_SRC_ACCESS_ORDER_ANY == batch::kOrderAny);

// failIdx's answer when the failure is not one copy's (CUDA 12.8's documentation).
constexpr size_t kNoCopy = SIZE_MAX;

// Whether the backend reads `src` in stream order rather than the stub when the copy is made.
bool read_in_stream_order(CUdeviceptr src, size_t bytes) {
  const void* address = as_pointer(src);
  return device_ranges().find(address).has_value() || shared_offset(address, bytes).has_value();
}

CUresult batch_copies(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                      CUmemcpyAttributes* attrs, size_t* attrs_idxs, size_t num_attrs,
                      size_t* fail_idx, CUstream stream) {
  if (fail_idx != nullptr) *fail_idx = kNoCopy;
  // The legacy default stream is refused, as natively (it would order the batch against every
  // other stream).
  if (dsts == nullptr || srcs == nullptr || sizes == nullptr ||
      !batch::valid_attributes(count, attrs, attrs_idxs, num_attrs,
                               CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) ||
      stream == nullptr || stream == CU_STREAM_LEGACY) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  bool wait = false;
  CUresult result = CUDA_SUCCESS;
  const size_t stopped = batch::for_each_copy(
      count, attrs, attrs_idxs, num_attrs, [&](size_t i, const CUmemcpyAttributes& attributes) {
        result = cuMemcpyAsync(dsts[i], srcs[i], sizes[i], stream);
        wait = wait ||
               (batch::read_during_call(attributes) && read_in_stream_order(srcs[i], sizes[i]));
        return result == CUDA_SUCCESS;
      });
  if (result != CUDA_SUCCESS) {
    if (fail_idx != nullptr) *fail_idx = stopped;
    return result;
  }
  return wait ? cuStreamSynchronize(stream) : CUDA_SUCCESS;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

// cuda.h declares CUDA 12.8's forms only for the driver's own build (its cuMemcpyBatchAsync is
// a macro for the _v2 otherwise); these are their ABIs.
#undef cuMemcpyBatchAsync
#undef cuMemcpyBatchAsync_ptsz
extern "C" {
CUresult cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                            CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                            size_t* failIdx, CUstream hStream);
CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                                 CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                                 size_t* failIdx, CUstream hStream);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyBatchAsync_v2(
    CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count, CUmemcpyAttributes* attrs,
    size_t* attrsIdxs, size_t numAttrs, CUstream hStream) {
  return cr::batch_copies(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, nullptr, hStream);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyBatchAsync(
    CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count, CUmemcpyAttributes* attrs,
    size_t* attrsIdxs, size_t numAttrs, size_t* failIdx, CUstream hStream) {
  return cr::batch_copies(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyBatchAsync_ptsz(
    CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count, CUmemcpyAttributes* attrs,
    size_t* attrsIdxs, size_t numAttrs, size_t* failIdx, CUstream hStream) {
  return cr::batch_copies(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx,
                          cr::per_thread(hStream));
}

// cudaMemcpyBatchAsync: a batch of pointer-to-pointer copies in one stream. CUDA orders the batch
// as a whole in the stream and the copies within it in no order it promises; the stub runs them
// as the copies they are, in the order listed, each as cudaMemcpyAsync with cudaMemcpyDefault
// would (so every path of memcpy.cpp serves them: the arena, landings, chunks).
//
// The attributes are vetted as the runtime vets them: each copy is covered by one (attrsIdxs
// starts at 0, rises strictly and stays below count), with a source access order CUDA knows and
// no flag it does not. Their location hints concern managed and pageable-access memory, which the
// backend's GPU does not reach from here, and are ignored as CUDA ignores them elsewhere.
// cudaMemcpySrcAccessOrderDuringApiCall promises the caller that the sources were read when the
// call returns: the stub reads client memory when a copy is made anyway, and for a source the
// backend reads in stream order (device memory, page-locked memory in the arena) the call waits
// for the stream before it returns.
#include "common/batch_copies.h"
#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

static_assert(cudaMemcpySrcAccessOrderStream == batch::kOrderStream &&
              cudaMemcpySrcAccessOrderDuringApiCall == batch::kOrderDuringApiCall &&
              cudaMemcpySrcAccessOrderAny == batch::kOrderAny);

// Whether the backend reads `src` in stream order rather than the stub when the copy is made.
bool read_in_stream_order(const void* src, size_t bytes) {
  return is_device_pointer(src) || shared_host_offset(src, bytes).has_value();
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyBatchAsync(void* const* dsts, const void* const* srcs,
                                                       const size_t* sizes, size_t count,
                                                       cudaMemcpyAttributes* attrs,
                                                       size_t* attrsIdxs, size_t numAttrs,
                                                       cudaStream_t stream) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) return init;
  // The legacy default stream is refused, as natively (it would order the batch against every
  // other stream).
  if (dsts == nullptr || srcs == nullptr || sizes == nullptr ||
      !gvirtus::batch::valid_attributes(count, attrs, attrsIdxs, numAttrs,
                                        cudaMemcpyFlagPreferOverlapWithCompute) ||
      stream == nullptr || stream == cudaStreamLegacy) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  bool wait = false;
  cudaError_t result = cudaSuccess;
  gvirtus::batch::for_each_copy(
      count, attrs, attrsIdxs, numAttrs, [&](size_t i, const cudaMemcpyAttributes& attributes) {
        result = cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream);
        wait = wait || (gvirtus::batch::read_during_call(attributes) &&
                        cr::read_in_stream_order(srcs[i], sizes[i]));
        return result == cudaSuccess;
      });
  if (result != cudaSuccess) return result;
  return wait ? cudaStreamSynchronize(stream) : cudaSuccess;
}

// The per-thread default stream's form: a null stream is the calling thread's own.
GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyBatchAsync_ptsz(
    void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
    cudaMemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs, cudaStream_t stream) {
  return cudaMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                              stream == nullptr ? cudaStreamPerThread : stream);
}

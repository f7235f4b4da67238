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
#include <algorithm>

#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

bool known_access_order(cudaMemcpySrcAccessOrder order) {
  return order == cudaMemcpySrcAccessOrderStream ||
         order == cudaMemcpySrcAccessOrderDuringApiCall || order == cudaMemcpySrcAccessOrderAny;
}

// Whether the arrays describe a batch CUDA would take: `count` copies, each covered by one of
// `num_attrs` attributes.
bool valid_batch(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
                 const cudaMemcpyAttributes* attrs, const size_t* attrs_idxs, size_t num_attrs) {
  if (dsts == nullptr || srcs == nullptr || sizes == nullptr || count == 0) return false;
  if (attrs == nullptr || attrs_idxs == nullptr || num_attrs == 0 || num_attrs > count) {
    return false;
  }
  if (attrs_idxs[0] != 0 || attrs_idxs[num_attrs - 1] >= count) return false;
  for (size_t k = 0; k < num_attrs; ++k) {
    if (k > 0 && attrs_idxs[k] <= attrs_idxs[k - 1]) return false;
    if (!known_access_order(attrs[k].srcAccessOrder)) return false;
    if ((attrs[k].flags & ~unsigned{cudaMemcpyFlagPreferOverlapWithCompute}) != 0) return false;
  }
  return true;
}

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
  if (!cr::valid_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs) || stream == nullptr ||
      stream == cudaStreamLegacy) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  bool wait = false;
  size_t attr = 0;
  for (size_t i = 0; i < count; ++i) {
    while (attr + 1 < numAttrs && attrsIdxs[attr + 1] <= i) ++attr;
    if (const cudaError_t rc =
            cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream);
        rc != cudaSuccess) {
      return rc;
    }
    wait = wait || (attrs[attr].srcAccessOrder == cudaMemcpySrcAccessOrderDuringApiCall &&
                    cr::read_in_stream_order(srcs[i], sizes[i]));
  }
  return wait ? cudaStreamSynchronize(stream) : cudaSuccess;
}

// The per-thread default stream's form: a null stream is the calling thread's own.
GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyBatchAsync_ptsz(
    void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
    cudaMemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs, cudaStream_t stream) {
  return cudaMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                              stream == nullptr ? cudaStreamPerThread : stream);
}

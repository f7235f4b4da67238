// cuStreamBatchMemOp of the client libcuda.so.1 (wire: common/driver_wire.h's MemOpRecord): the
// batch is checked as the driver checks its shape (known operations, an array for a non-empty
// batch, no more than kMaxBatchMemOps) and sent ahead whole, as the single waits and writes are;
// the backend vets each word and runs the batch as one. CUDA 13's form is _v2; the first one
// (CUDA 11.7's ABI, the same arguments) lacks the memory barrier.
#include <cuda.h>

#include <cstring>
#include <vector>

#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/mem_op_records.h"
#include "plugins/cuda/frontend/per_thread.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

CUresult batch_mem_ops(CUstream stream, unsigned int count, const CUstreamBatchMemOpParams* params,
                       unsigned int flags, bool barrier_allowed) {
  if (count > kMaxBatchMemOps || (count > 0 && params == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::vector<MemOpRecord> records(count);
  for (unsigned i = 0; i < count; ++i) {
    if (!mem_op_record(params[i], barrier_allowed, records[i])) return CUDA_ERROR_INVALID_VALUE;
  }
  const stub::RouteScope route(pool_backend_of_handle("stream", stream));
  return remote_async(Fn::cuStreamBatchMemOp_v2, [&](WireWriter& w) {
    marshal::put_value(w, stream);
    w.put<uint32_t>(flags);
    w.put<uint32_t>(count);
    for (const MemOpRecord& r : records) put_record(w, r);
  });
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#undef cuStreamBatchMemOp
extern "C" {
CUresult cuStreamBatchMemOp(CUstream stream, unsigned int count,
                            CUstreamBatchMemOpParams* paramArray, unsigned int flags);
CUresult cuStreamBatchMemOp_ptsz(CUstream stream, unsigned int count,
                                 CUstreamBatchMemOpParams* paramArray, unsigned int flags);
}

extern "C" __attribute__((visibility("default"))) CUresult cuStreamBatchMemOp_v2(
    CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray, unsigned int flags) {
  return cr::batch_mem_ops(stream, count, paramArray, flags, true);
}

extern "C" __attribute__((visibility("default"))) CUresult cuStreamBatchMemOp(
    CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray, unsigned int flags) {
  return cr::batch_mem_ops(stream, count, paramArray, flags, false);
}

extern "C" __attribute__((visibility("default"))) CUresult cuStreamBatchMemOp_ptsz(
    CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray, unsigned int flags) {
  return cr::batch_mem_ops(cr::per_thread(stream), count, paramArray, flags, false);
}

// The backend's batches of managed memory prefetches and discards (managed_batches.h).
#include "plugins/cuda/backend/managed_batches.h"

#include <vector>

#include "common/call_marshal.h"
#include "common/managed_batch_wire.h"
#include "cuda_real.h"
#include "cuda_vetting.h"

namespace gvirtus::cuda {

bool run_managed_batch(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  if (fn != Fn::cuMemPrefetchBatchAsync && fn != Fn::cuMemDiscardBatchAsync &&
      fn != Fn::cuMemDiscardAndPrefetchBatchAsync) {
    return false;
  }
  const auto stream = marshal::get_value<CUstream>(in);
  auto batch = read_managed_batch<CUmemLocation>(in, fn == Fn::cuMemDiscardBatchAsync);
  const size_t count = batch.addresses.size(), locations = batch.locations.size();
  std::vector<CUdeviceptr> addresses(batch.addresses.begin(), batch.addresses.end());
  result = vet(stream);
  for (size_t i = 0; i < count && result == CUDA_SUCCESS; ++i) {
    result = vet_device_pointer(addresses[i], batch.sizes[i]);
  }
  CUdeviceptr* const dptrs = count != 0 ? addresses.data() : nullptr;
  size_t* const sizes = count != 0 ? batch.sizes.data() : nullptr;
  CUmemLocation* const locs = locations != 0 ? batch.locations.data() : nullptr;
  size_t* const firsts = locations != 0 ? batch.firsts.data() : nullptr;
  if (result == CUDA_SUCCESS) {
    switch (fn) {
      case Fn::cuMemPrefetchBatchAsync:
        result = real().cuMemPrefetchBatchAsync == nullptr
                     ? CUDA_ERROR_NOT_SUPPORTED
                     : real().cuMemPrefetchBatchAsync(dptrs, sizes, count, locs, firsts, locations,
                                                      batch.flags, stream);
        break;
      case Fn::cuMemDiscardBatchAsync:
        result = real().cuMemDiscardBatchAsync == nullptr
                     ? CUDA_ERROR_NOT_SUPPORTED
                     : real().cuMemDiscardBatchAsync(dptrs, sizes, count, batch.flags, stream);
        break;
      default:
        result = real().cuMemDiscardAndPrefetchBatchAsync == nullptr
                     ? CUDA_ERROR_NOT_SUPPORTED
                     : real().cuMemDiscardAndPrefetchBatchAsync(dptrs, sizes, count, locs, firsts,
                                                                locations, batch.flags, stream);
        break;
    }
  }
  out.put<int32_t>(result);
  return true;
}

}  // namespace gvirtus::cuda

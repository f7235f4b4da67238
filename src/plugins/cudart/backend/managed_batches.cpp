// The backend's batches of managed memory prefetches and discards (common/managed_batch_wire.h).
#include <cuda_runtime_api.h>

#include <vector>

#include "common/call_marshal.h"
#include "common/managed_batch_wire.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {

cudaError_t run_managed_batch(Fn fn, WireReader& in, WireWriter& out) {
  const auto stream = marshal::get_value<cudaStream_t>(in);
  auto batch = read_managed_batch<cudaMemLocation>(in, fn == Fn::cudaMemDiscardBatchAsync);
  const size_t count = batch.addresses.size(), locations = batch.locations.size();
  std::vector<void*> addresses(count);
  cudaError_t result = vet(stream);
  for (size_t i = 0; i < count; ++i) {
    addresses[i] = reinterpret_cast<void*>(static_cast<uintptr_t>(batch.addresses[i]));
    if (result == cudaSuccess) result = vet_device_pointer(addresses[i], batch.sizes[i]);
  }
  if (result == cudaSuccess) {
    void** const dptrs = count != 0 ? addresses.data() : nullptr;
    size_t* const lengths = count != 0 ? batch.sizes.data() : nullptr;
    cudaMemLocation* const locs = locations != 0 ? batch.locations.data() : nullptr;
    size_t* const firsts = locations != 0 ? batch.firsts.data() : nullptr;
    switch (fn) {
      case Fn::cudaMemPrefetchBatchAsync:
        result = ::cudaMemPrefetchBatchAsync(dptrs, lengths, count, locs, firsts, locations,
                                             batch.flags, stream);
        break;
      case Fn::cudaMemDiscardBatchAsync:
        result = ::cudaMemDiscardBatchAsync(dptrs, lengths, count, batch.flags, stream);
        break;
      default:
        result = ::cudaMemDiscardAndPrefetchBatchAsync(dptrs, lengths, count, locs, firsts,
                                                       locations, batch.flags, stream);
        break;
    }
  }
  out.put<int32_t>(result);
  return result;
}

}  // namespace gvirtus::cudart

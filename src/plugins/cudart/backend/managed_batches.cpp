// The backend's batches of managed memory prefetches and discards (common/managed_batch_wire.h).
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "common/error.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/managed_batch_wire.h"

namespace gvirtus::cudart {

cudaError_t run_managed_batch(Fn fn, WireReader& in, WireWriter& out) {
  const auto stream = marshal::get_value<cudaStream_t>(in);
  const auto flags = in.get<uint64_t>();
  const auto count = in.get<uint64_t>();
  if (count > kMaxManagedBatch || in.remaining() < count * 2 * sizeof(uint64_t)) {
    raise(ErrorKind::kInvalidInput, "a managed batch of " + std::to_string(count) + " ranges");
  }
  cudaError_t result = vet(stream);
  std::vector<void*> addresses(count);
  std::vector<size_t> sizes(count);
  for (uint64_t i = 0; i < count; ++i) {
    addresses[i] = reinterpret_cast<void*>(static_cast<uintptr_t>(in.get<uint64_t>()));
    sizes[i] = static_cast<size_t>(in.get<uint64_t>());
    if (result == cudaSuccess) result = vet_device_pointer(addresses[i], sizes[i]);
  }
  const auto locations = in.get<uint64_t>();
  if (locations > count || (fn == Fn::cudaMemDiscardBatchAsync && locations != 0)) {
    raise(ErrorKind::kInvalidInput, "a managed batch's " + std::to_string(locations) +
                                        " locations for " + std::to_string(count) + " ranges");
  }
  std::vector<cudaMemLocation> where(locations);
  std::vector<size_t> first(locations);
  for (uint64_t i = 0; i < locations; ++i) {
    const auto bytes = in.get_raw(sizeof(cudaMemLocation));
    std::memcpy(&where[i], bytes.data(), sizeof(cudaMemLocation));
    first[i] = static_cast<size_t>(in.get<uint64_t>());
  }
  in.expect_end();
  if (result == cudaSuccess) {
    void** const dptrs = count != 0 ? addresses.data() : nullptr;
    size_t* const lengths = count != 0 ? sizes.data() : nullptr;
    cudaMemLocation* const locs = locations != 0 ? where.data() : nullptr;
    size_t* const firsts = locations != 0 ? first.data() : nullptr;
    switch (fn) {
      case Fn::cudaMemPrefetchBatchAsync:
        result = ::cudaMemPrefetchBatchAsync(dptrs, lengths, count, locs, firsts, locations, flags,
                                             stream);
        break;
      case Fn::cudaMemDiscardBatchAsync:
        result = ::cudaMemDiscardBatchAsync(dptrs, lengths, count, flags, stream);
        break;
      default:
        result = ::cudaMemDiscardAndPrefetchBatchAsync(dptrs, lengths, count, locs, firsts,
                                                       locations, flags, stream);
        break;
    }
  }
  out.put<int32_t>(result);
  return result;
}

}  // namespace gvirtus::cudart

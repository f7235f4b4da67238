// The backend's handlers of memory pools of one's own and of a pool's attributes (wire:
// common/driver_wire.h's PoolCreateRequest and PoolAttributeRequest). A new pool's properties
// are built here from the request's fields (no pointer of the client's reaches the driver). For an
// attribute, the pool must be the session's and the attribute one the driver defines (anything
// else is malformed); the value is passed to the driver as the type the attribute takes, in
// memory of ours.
#include <cuda.h>

#include <string>

#include "common/call_marshal.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/memory_pools.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

namespace {

// cuMemPoolCreate: properties of our own, built from the request's (no Windows pointer, no
// shareable handles: the stub sends none, and a request with some is malformed).
void create_pool(WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<PoolCreateRequest>(in);
  in.expect_end();
  if (request.handle_types != CU_MEM_HANDLE_TYPE_NONE || request.usage > 0xffff) {
    raise(ErrorKind::kInvalidInput, "memory pool properties the stub never sends");
  }
  CUmemPoolProps props{};
  props.allocType = static_cast<CUmemAllocationType>(request.alloc_type);
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = static_cast<CUmemLocationType>(request.location_type);
  props.location.id = request.location_id;
  props.maxSize = request.max_size;
  props.usage = static_cast<unsigned short>(request.usage);
  CUmemoryPool pool = nullptr;
  result = real().cuMemPoolCreate != nullptr ? real().cuMemPoolCreate(&pool, &props)
                                             : CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) adopt(pool);
  out.put<int32_t>(result);
  marshal::put_value(out, result == CUDA_SUCCESS ? pool : nullptr);
}

}  // namespace

bool run_memory_pool(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  if (fn == Fn::cuMemPoolCreate) {
    create_pool(in, out, result);
    return true;
  }
  if (fn != Fn::cuMemPoolSetAttribute && fn != Fn::cuMemPoolGetAttribute) return false;
  const auto request = get_record<PoolAttributeRequest>(in);
  in.expect_end();
  if (request.attribute < CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
      request.attribute > CU_MEMPOOL_ATTR_USED_MEM_HIGH) {
    raise(ErrorKind::kInvalidInput, "memory pool attribute " + std::to_string(request.attribute));
  }
  const auto attribute = static_cast<CUmemPool_attribute>(request.attribute);
  const bool is_int = pool_attribute_is_int(request.attribute);
  int narrow = static_cast<int>(static_cast<int64_t>(request.value));
  cuuint64_t wide = request.value;
  void* value = is_int ? static_cast<void*>(&narrow) : static_cast<void*>(&wide);
  result = vet(request.pool);
  const bool set = fn == Fn::cuMemPoolSetAttribute;
  const void* entry = set ? reinterpret_cast<const void*>(real().cuMemPoolSetAttribute)
                          : reinterpret_cast<const void*>(real().cuMemPoolGetAttribute);
  if (result == CUDA_SUCCESS && entry == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) {
    result = set ? real().cuMemPoolSetAttribute(request.pool, attribute, value)
                 : real().cuMemPoolGetAttribute(request.pool, attribute, value);
  }
  out.put<int32_t>(result);
  if (!set) {
    const uint64_t answer = result != CUDA_SUCCESS ? 0
                            : is_int               ? static_cast<uint64_t>(narrow)
                                                   : uint64_t{wide};
    out.put<uint64_t>(answer);
  }
  return true;
}

}  // namespace gvirtus::cuda

// Memory pool attributes (memory_pools.h): the pool must be the session's; the value is an 8-byte
// buffer of ours, of which the runtime reads or writes the attribute's own size.
#include "plugins/cudart/backend/memory_pools.h"

#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/memory_pool_wire.h"

namespace gvirtus::cudart {

bool run_memory_pool(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  if (fn != Fn::cudaMemPoolGetAttribute && fn != Fn::cudaMemPoolSetAttribute) return false;
  const auto pool = reinterpret_cast<cudaMemPool_t>(static_cast<uintptr_t>(in.get<uint64_t>()));
  const auto attribute = in.get<uint32_t>();
  unsigned long long value = 0;
  if (fn == Fn::cudaMemPoolSetAttribute) value = in.get<uint64_t>();
  in.expect_end();
  // An attribute CUDA 13 does not define gets the runtime's answer for one, without the runtime
  // (a value outside the enum is never made one).
  result = vet(pool);
  if (result == cudaSuccess && attribute_bytes(attribute) == 0) result = cudaErrorInvalidValue;
  if (result == cudaSuccess) {
    const auto attr = static_cast<cudaMemPoolAttr>(attribute);
    result = fn == Fn::cudaMemPoolGetAttribute ? ::cudaMemPoolGetAttribute(pool, attr, &value)
                                               : ::cudaMemPoolSetAttribute(pool, attr, &value);
  }
  out.put<int32_t>(result);
  if (fn == Fn::cudaMemPoolGetAttribute) out.put<uint64_t>(result == cudaSuccess ? value : 0);
  return true;
}

}  // namespace gvirtus::cudart

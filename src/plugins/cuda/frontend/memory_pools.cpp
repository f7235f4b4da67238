// A memory pool's attributes in the client libcuda.so.1 (cuMemPoolSetAttribute,
// cuMemPoolGetAttribute): the value behind the caller's pointer is an int or a cuuint64_t by
// attribute (common/driver_wire.h), so the stub reads and writes it here and sends it as u64.
#include <cuda.h>

#include <cstring>
#include <optional>

#include "common/call_marshal.h"
#include "common/shareable_token.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace cr = gvirtus::cuda;

namespace {

bool known_attribute(CUmemPool_attribute attribute) {
  return attribute >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
         attribute <= CU_MEMPOOL_ATTR_USED_MEM_HIGH;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuMemPoolSetAttribute(
    CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  if (value == nullptr || !known_attribute(attr)) return CUDA_ERROR_INVALID_VALUE;
  uint64_t wide = 0;
  if (cr::pool_attribute_is_int(attr)) {
    int narrow = 0;
    std::memcpy(&narrow, value, sizeof narrow);
    wide = static_cast<uint64_t>(static_cast<int64_t>(narrow));
  } else {
    std::memcpy(&wide, value, sizeof wide);
  }
  const cr::PoolAttributeRequest request{pool, static_cast<uint32_t>(attr), wide};
  return cr::remote_sync(
      cr::Fn::cuMemPoolSetAttribute,
      [&](gvirtus::WireWriter& w) { gvirtus::put_record(w, request); },
      [](gvirtus::WireReader&) {});
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemPoolGetAttribute(
    CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  if (value == nullptr || !known_attribute(attr)) return CUDA_ERROR_INVALID_VALUE;
  const cr::PoolAttributeRequest request{pool, static_cast<uint32_t>(attr), 0};
  uint64_t wide = 0;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuMemPoolGetAttribute,
      [&](gvirtus::WireWriter& w) { gvirtus::put_record(w, request); },
      [&](gvirtus::WireReader& r) { wide = r.get<uint64_t>(); });
  if (result != CUDA_SUCCESS) return result;
  if (cr::pool_attribute_is_int(attr)) {
    const int narrow = static_cast<int>(wide);
    std::memcpy(value, &narrow, sizeof narrow);
  } else {
    std::memcpy(value, &wide, sizeof wide);
  }
  return CUDA_SUCCESS;
}

// A pool of one's own. Its shareable handle types may be a POSIX descriptor and a fabric handle,
// which gvirtus shares (shareable_handles.cpp); Windows ones are CUDA_ERROR_NOT_SUPPORTED. The
// Windows security pointer means nothing on Linux, and is not sent.
extern "C" __attribute__((visibility("default"))) CUresult cuMemPoolCreate(
    CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  if (pool == nullptr || poolProps == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto handle_types = static_cast<uint32_t>(poolProps->handleTypes);
  if ((handle_types & ~(gvirtus::kHandlePosixFd | gvirtus::kHandleFabric)) != 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  const cr::PoolCreateRequest request{
      static_cast<uint32_t>(poolProps->allocType),    handle_types,
      static_cast<int32_t>(poolProps->location.type), poolProps->location.id,
      static_cast<uint64_t>(poolProps->maxSize),      poolProps->usage};
  CUmemoryPool created = nullptr;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuMemPoolCreate, [&](gvirtus::WireWriter& w) { gvirtus::put_record(w, request); },
      [&](gvirtus::WireReader& r) { created = gvirtus::marshal::get_value<CUmemoryPool>(r); });
  if (result == CUDA_SUCCESS) *pool = created;
  return result;
}

namespace {

// A location as the backend that owns it numbers it: a device of a pool's routed to its backend.
struct RoutedLocation {
  CUmemLocation local;
  std::optional<uint32_t> backend;
};
RoutedLocation routed(const CUmemLocation& location) {
  RoutedLocation r{location, std::nullopt};
  if (location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
    r.backend = cr::pool_backend_of_device(location.id);
    r.local.id = cr::pool_local_device(location.id);
  }
  return r;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuMemGetDefaultMemPool(
    CUmemoryPool* pool_out, CUmemLocation* location, CUmemAllocationType type) {
  if (location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  RoutedLocation r = routed(*location);
  const gvirtus::stub::RouteScope route(r.backend);
  return cr::remote::cuMemGetDefaultMemPool(pool_out, &r.local, type);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemGetMemPool(
    CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
  if (location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  RoutedLocation r = routed(*location);
  const gvirtus::stub::RouteScope route(r.backend);
  return cr::remote::cuMemGetMemPool(pool, &r.local, type);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemSetMemPool(CUmemLocation* location,
                                                                           CUmemAllocationType type,
                                                                           CUmemoryPool pool) {
  if (location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  RoutedLocation r = routed(*location);
  const gvirtus::stub::RouteScope route(r.backend);
  return cr::remote::cuMemSetMemPool(&r.local, type, pool);
}

// The backend's handlers of memory pools of one's own and of a pool's attributes (wire:
// common/driver_wire.h's PoolCreateRequest and PoolAttributeRequest). A new pool's properties
// are built here from the request's fields (no pointer of the client's reaches the driver). For an
// attribute, the pool must be the session's and the attribute one the driver defines (anything
// else is malformed); the value is passed to the driver as the type the attribute takes, in
// memory of ours. Pools and their pointers shared between sessions (rows 288-291; the scheme:
// src/common/shareable_token.h): an exported descriptor stays with the exporting session, which
// answers a token for it (services/shareable_handles.h); an import fetches it from there.
#include <cuda.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "backend/services/session_services.h"
#include "backend/services/shareable_handles.h"
#include "common/call_marshal.h"
#include "common/error.h"
#include "common/log.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/memory_pools.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

namespace {

// cuMemPoolCreate: properties of our own, built from the request's (no Windows pointer; of the
// shareable handle types only those gvirtus shares - a POSIX descriptor, a fabric handle - which
// is all the stub sends: a request with others is malformed).
void create_pool(WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<PoolCreateRequest>(in);
  in.expect_end();
  if ((request.handle_types & ~(kHandlePosixFd | kHandleFabric)) != 0 || request.usage > 0xffff) {
    raise(ErrorKind::kInvalidInput, "memory pool properties the stub never sends");
  }
  CUmemPoolProps props{};
  props.allocType = static_cast<CUmemAllocationType>(request.alloc_type);
  props.handleTypes = static_cast<CUmemAllocationHandleType>(request.handle_types);
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

// cuMemPoolExportToShareableHandle: a pool of the session's, exported as the request's type; the
// reply brings the token (the descriptor stays with this session) or the fabric handle.
void export_pool(WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<ShareableRequest>(in);
  in.expect_end();
  if (shareable_blob_bytes(request.type) == 0) {
    raise(ErrorKind::kInvalidInput, "a pool export of handle type " + std::to_string(request.type));
  }
  const auto pool = reinterpret_cast<CUmemoryPool>(static_cast<uintptr_t>(request.handle));
  result = vet(pool);
  if (result == CUDA_SUCCESS) result = lacks(real().cuMemPoolExportToShareableHandle);
  alignas(8) std::byte handle[kFabricHandleBytes] = {};
  if (result == CUDA_SUCCESS) {
    result = real().cuMemPoolExportToShareableHandle(
        handle, pool, static_cast<CUmemAllocationHandleType>(request.type), request.flags);
  }
  result = services::reply_export(out, result, CUDA_ERROR_OPERATING_SYSTEM, request.type, handle, 0,
                                  "cuMemPoolExportToShareableHandle");
}

// cuMemPoolImportFromShareableHandle: the descriptor fetched from the exporting session (or the
// fabric handle) imported here; the pool becomes the session's.
void import_pool(WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<ShareableRequest>(in);
  const auto blob = in.get_blob(kFabricHandleBytes);
  in.expect_end();
  services::ImportSource source;
  result = lacks(real().cuMemPoolImportFromShareableHandle);
  if (result == CUDA_SUCCESS) {
    result = services::fetch_import(request.type, blob, source, CUDA_ERROR_INVALID_VALUE,
                                    "cuMemPoolImportFromShareableHandle");
  }
  CUmemoryPool pool = nullptr;
  if (result == CUDA_SUCCESS) {
    result = real().cuMemPoolImportFromShareableHandle(
        &pool, source.os_handle(), static_cast<CUmemAllocationHandleType>(request.type),
        request.flags);
  }
  if (result == CUDA_SUCCESS) adopt(pool);
  out.put<int32_t>(result);
  marshal::put_value(out, result == CUDA_SUCCESS ? pool : nullptr);
}

// cuMemPoolExportPointer: device memory of the session's; the driver's export data comes back.
void export_pointer(WireReader& in, WireWriter& out, CUresult& result) {
  const auto pointer = marshal::get_value<CUdeviceptr>(in);
  in.expect_end();
  result = vet_device_pointer(pointer, 1);
  if (result == CUDA_SUCCESS) result = lacks(real().cuMemPoolExportPointer);
  CUmemPoolPtrExportData data{};
  if (result == CUDA_SUCCESS) result = real().cuMemPoolExportPointer(&data, pointer);
  out.put<int32_t>(result);
  out.put_blob(&data, result == CUDA_SUCCESS ? sizeof data : 0);  // none after a failure
}

// cuMemPoolImportPointer: into a pool of the session's (an imported one); the pointer becomes
// device memory of the session's, as large as the driver says its allocation is, until freed.
void import_pointer(WireReader& in, WireWriter& out, CUresult& result) {
  const auto pool = marshal::get_value<CUmemoryPool>(in);
  const auto blob = in.get_blob(sizeof(CUmemPoolPtrExportData));
  in.expect_end();
  if (blob.size() != sizeof(CUmemPoolPtrExportData)) {
    raise(ErrorKind::kInvalidInput,
          "pointer export data of " + std::to_string(blob.size()) + " bytes");
  }
  CUmemPoolPtrExportData data{};
  std::memcpy(&data, blob.data(), sizeof data);
  result = vet(pool);
  if (result == CUDA_SUCCESS) result = lacks(real().cuMemPoolImportPointer);
  if (result == CUDA_SUCCESS) result = lacks(real().cuPointerGetAttribute);
  CUdeviceptr pointer = 0, base = 0;
  size_t bytes = 0;
  if (result == CUDA_SUCCESS) result = real().cuMemPoolImportPointer(&pointer, pool, &data);
  if (result == CUDA_SUCCESS) {
    // Its extent by the pointer's attributes, which need no current context: NVIDIA's runtime
    // imports without making one current (cuMemGetAddressRange would answer
    // CUDA_ERROR_INVALID_CONTEXT then, as a GPU did).
    result = real().cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, pointer);
    if (result == CUDA_SUCCESS) {
      result = real().cuPointerGetAttribute(&bytes, CU_POINTER_ATTRIBUTE_RANGE_SIZE, pointer);
    }
    if (result != CUDA_SUCCESS || base != pointer) {
      real().cuMemFree_v2(pointer);  // its extent unknown: not the session's to use
      result = result == CUDA_SUCCESS ? CUDA_ERROR_INVALID_VALUE : result;
    }
  }
  if (result == CUDA_SUCCESS) {
    services::session_services().allocations.allocated(
        reinterpret_cast<const void*>(static_cast<uintptr_t>(pointer)), bytes);
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? pointer : 0);
  out.put<uint64_t>(result == CUDA_SUCCESS ? bytes : 0);
}

}  // namespace

bool run_memory_pool(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuMemPoolCreate:
      create_pool(in, out, result);
      return true;
    case Fn::cuMemPoolExportToShareableHandle:
      export_pool(in, out, result);
      return true;
    case Fn::cuMemPoolImportFromShareableHandle:
      import_pool(in, out, result);
      return true;
    case Fn::cuMemPoolExportPointer:
      export_pointer(in, out, result);
      return true;
    case Fn::cuMemPoolImportPointer:
      import_pointer(in, out, result);
      return true;
    default:
      break;
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

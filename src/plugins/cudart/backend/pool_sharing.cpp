// Memory pools and their pointers shared between sessions in runtime mode (cudart rows 301-304;
// the scheme: src/common/shareable_token.h; the same as the driver plugin's, backend/
// services/shareable_handles.h keeping what this session exported). A pool must be the session's
// to be exported or imported into; a pointer must be device memory by the runtime's account
// (vetting.h). An imported pointer is device memory by the runtime's account too; its size, which
// the stub records, comes from the loaded driver (loaded_driver.h).
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "backend/services/shareable_handles.h"
#include "common/error.h"
#include "common/log.h"
#include "common/shareable_token.h"
#include "common/wire_record.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/loaded_driver.h"
#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {
namespace {

void export_pool(WireReader& in, WireWriter& out, cudaError_t& result) {
  const auto request = get_record<ShareableRequest>(in);
  in.expect_end();
  if (shareable_blob_bytes(request.type) == 0) {
    raise(ErrorKind::kInvalidInput, "a pool export of handle type " + std::to_string(request.type));
  }
  const auto pool = reinterpret_cast<cudaMemPool_t>(static_cast<uintptr_t>(request.handle));
  result = vet(pool);
  alignas(8) std::byte handle[kFabricHandleBytes] = {};
  if (result == cudaSuccess) {
    result = ::cudaMemPoolExportToShareableHandle(
        handle, pool, static_cast<cudaMemAllocationHandleType>(request.type),
        static_cast<unsigned>(request.flags));
  }
  result = services::reply_export(out, result, cudaErrorOperatingSystem, request.type, handle, 0,
                                  "cudaMemPoolExportToShareableHandle");
}

void import_pool(WireReader& in, WireWriter& out, cudaError_t& result) {
  const auto request = get_record<ShareableRequest>(in);
  const auto blob = in.get_blob(kFabricHandleBytes);
  in.expect_end();
  services::ImportSource source;
  result = services::fetch_import(request.type, blob, source, cudaErrorInvalidValue,
                                  "cudaMemPoolImportFromShareableHandle");
  cudaMemPool_t pool = nullptr;
  if (result == cudaSuccess) {
    result = ::cudaMemPoolImportFromShareableHandle(
        &pool, source.os_handle(), static_cast<cudaMemAllocationHandleType>(request.type),
        static_cast<unsigned>(request.flags));
  }
  if (result == cudaSuccess) adopt(pool);
  out.put<int32_t>(result);
  out.put<uint64_t>(result == cudaSuccess ? reinterpret_cast<uintptr_t>(pool) : 0);
}

void export_pointer(WireReader& in, WireWriter& out, cudaError_t& result) {
  const auto pointer = reinterpret_cast<void*>(static_cast<uintptr_t>(in.get<uint64_t>()));
  in.expect_end();
  result = vet_device_pointer(pointer);
  cudaMemPoolPtrExportData data{};
  if (result == cudaSuccess) result = ::cudaMemPoolExportPointer(&data, pointer);
  out.put<int32_t>(result);
  out.put_blob(&data, result == cudaSuccess ? sizeof data : 0);  // none after a failure
}

void import_pointer(WireReader& in, WireWriter& out, cudaError_t& result) {
  const auto pool = reinterpret_cast<cudaMemPool_t>(static_cast<uintptr_t>(in.get<uint64_t>()));
  const auto blob = in.get_blob(sizeof(cudaMemPoolPtrExportData));
  in.expect_end();
  if (blob.size() != sizeof(cudaMemPoolPtrExportData)) {
    raise(ErrorKind::kInvalidInput,
          "pointer export data of " + std::to_string(blob.size()) + " bytes");
  }
  cudaMemPoolPtrExportData data{};
  std::memcpy(&data, blob.data(), sizeof data);
  result = vet(pool);
  void* pointer = nullptr;
  if (result == cudaSuccess) result = ::cudaMemPoolImportPointer(&pointer, pool, &data);
  out.put<int32_t>(result);
  out.put<uint64_t>(result == cudaSuccess ? reinterpret_cast<uintptr_t>(pointer) : 0);
  out.put<uint64_t>(result == cudaSuccess ? loaded_allocation_bytes(pointer) : 0);
}

}  // namespace

bool run_pool_sharing(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaMemPoolExportToShareableHandle:
      export_pool(in, out, result);
      return true;
    case Fn::cudaMemPoolImportFromShareableHandle:
      import_pool(in, out, result);
      return true;
    case Fn::cudaMemPoolExportPointer:
      export_pointer(in, out, result);
      return true;
    case Fn::cudaMemPoolImportPointer:
      import_pointer(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cudart

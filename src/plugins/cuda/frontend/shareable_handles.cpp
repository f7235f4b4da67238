// Shareable handles in the client libcuda.so.1 (rows 288-293; the scheme:
// src/common/shareable_token.h). An export hands the application a descriptor of this machine
// that carries the backend's token (a POSIX descriptor's export), or the fabric handle's bytes;
// an import sends what the application's handle carries, and a descriptor gvirtus did not make
// is refused here with CUDA_ERROR_UNKNOWN, the driver's answer to one it did not export (H200,
// driver 580: /dev/null). A Windows type is CUDA_ERROR_INVALID_VALUE to an export (the driver's:
// no pool or allocation on Linux has it) and CUDA_ERROR_NOT_SUPPORTED to an import. A
// pool's pointers travel as the driver's export data; an imported pointer is device memory of
// this process's session from then on, as large as its allocation, until it is freed.
#include <cuda.h>

#include <cstring>
#include <vector>

#include "common/call_marshal.h"
#include "common/shareable_token.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

CUresult status_of(ShareableOutcome outcome) {
  switch (outcome) {
    case ShareableOutcome::kDone:
      return CUDA_SUCCESS;
    case ShareableOutcome::kNotSupported:
      return CUDA_ERROR_NOT_SUPPORTED;
    case ShareableOutcome::kOperatingSystem:
      return CUDA_ERROR_OPERATING_SYSTEM;
    case ShareableOutcome::kForeign:
      return CUDA_ERROR_UNKNOWN;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// An export of `handle` (a pool or a physical allocation) as `type` into `handle_out`.
CUresult export_handle(Fn fn, uint64_t handle, std::optional<uint32_t> backend, void* handle_out,
                       CUmemAllocationHandleType type, unsigned long long flags) {
  if (handle_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (shareable_type(type) != ShareableOutcome::kDone) return CUDA_ERROR_INVALID_VALUE;
  const stub::RouteScope route(backend);
  std::vector<std::byte> blob;
  const CUresult result = remote_sync(
      fn,
      [&](WireWriter& w) {
        put_record(w, ShareableRequest{handle, static_cast<uint32_t>(type), flags});
      },
      [&](WireReader& r) {
        const auto bytes = r.get_blob(kFabricHandleBytes);
        blob.assign(bytes.begin(), bytes.end());
      });
  if (result != CUDA_SUCCESS) return result;
  return status_of(give_shareable(type, blob, handle_out));
}

// An import of what `os_handle` carries as `type`; the reply's handle into `imported`.
CUresult import_handle(Fn fn, uint64_t* imported, const void* os_handle,
                       CUmemAllocationHandleType type, unsigned long long flags) {
  if (imported == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const auto outcome = shareable_type(type); outcome != ShareableOutcome::kDone) {
    return status_of(outcome);
  }
  std::vector<std::byte> blob;
  if (const auto outcome = take_shareable(type, os_handle, blob);
      outcome != ShareableOutcome::kDone) {
    return status_of(outcome);
  }
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        put_record(w, ShareableRequest{0, static_cast<uint32_t>(type), flags});
        w.put_blob(blob.data(), blob.size());
      },
      [&](WireReader& r) { *imported = r.get<uint64_t>(); });
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool pool,
                                                         CUmemAllocationHandleType handleType,
                                                         unsigned long long flags) {
  return cr::export_handle(
      cr::Fn::cuMemPoolExportToShareableHandle, reinterpret_cast<uintptr_t>(pool),
      cr::pool_backend_of_handle("memory pool", pool), handle_out, handleType, flags);
}

GVIRTUS_EXPORT CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* handle,
                                                           CUmemAllocationHandleType handleType,
                                                           unsigned long long flags) {
  uint64_t imported = 0;
  const CUresult result =
      cr::import_handle(cr::Fn::cuMemPoolImportFromShareableHandle,
                        pool_out != nullptr ? &imported : nullptr, handle, handleType, flags);
  if (result == CUDA_SUCCESS) {
    *pool_out = reinterpret_cast<CUmemoryPool>(static_cast<uintptr_t>(imported));
    cr::pool_note_handle("memory pool", *pool_out);
  }
  return result;
}

GVIRTUS_EXPORT CUresult cuMemExportToShareableHandle(void* shareableHandle,
                                                     CUmemGenericAllocationHandle handle,
                                                     CUmemAllocationHandleType handleType,
                                                     unsigned long long flags) {
  return cr::export_handle(cr::Fn::cuMemExportToShareableHandle, handle, std::nullopt,
                           shareableHandle, handleType, flags);
}

GVIRTUS_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle,
                                                       void* osHandle,
                                                       CUmemAllocationHandleType shHandleType) {
  uint64_t imported = 0;
  const CUresult result =
      cr::import_handle(cr::Fn::cuMemImportFromShareableHandle,
                        handle != nullptr ? &imported : nullptr, osHandle, shHandleType, 0);
  if (result == CUDA_SUCCESS) *handle = imported;
  return result;
}

GVIRTUS_EXPORT CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out,
                                               CUdeviceptr ptr) {
  if (shareData_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_address(ptr));
  return cr::remote_sync(
      cr::Fn::cuMemPoolExportPointer, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(ptr); },
      [&](gvirtus::WireReader& r) {
        const auto data = r.get_blob(sizeof *shareData_out);  // none after a failure
        if (data.size() == sizeof *shareData_out) {
          std::memcpy(shareData_out, data.data(), data.size());
        } else if (!data.empty()) {
          gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "pointer export data");
        }
      });
}

GVIRTUS_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool pool,
                                               CUmemPoolPtrExportData* shareData) {
  if (ptr_out == nullptr || shareData == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_handle("memory pool", pool));
  uint64_t pointer = 0, bytes = 0;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuMemPoolImportPointer,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, pool);
        w.put_blob(shareData, sizeof *shareData);
      },
      [&](gvirtus::WireReader& r) {
        pointer = r.get<uint64_t>();
        bytes = r.get<uint64_t>();
      });
  if (result != CUDA_SUCCESS) return result;
  cr::note_allocated(cr::Fn::cuMemPoolImportPointer, pointer, bytes);
  *ptr_out = pointer;
  return CUDA_SUCCESS;
}

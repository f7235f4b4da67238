// Memory pools and their pointers shared between processes in runtime mode (rows 301-304; the
// scheme: src/common/shareable_token.h, as the driver stub's shareable_handles.cpp). An export
// hands the application a descriptor of this machine that carries the backend's token, or the
// fabric handle's bytes; an import sends what the application's handle carries, and a descriptor
// gvirtus did not make is refused here (cudaErrorInvalidValue). An imported pointer is recorded
// as device memory, as an IPC one is.
#include <cstring>
#include <vector>

#include "common/shareable_token.h"
#include "common/wire_record.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

cudaError_t status_of(gvirtus::ShareableOutcome outcome) {
  switch (outcome) {
    case gvirtus::ShareableOutcome::kDone:
      return cudaSuccess;
    case gvirtus::ShareableOutcome::kNotSupported:
      return cr::record_local_error(cudaErrorNotSupported);
    case gvirtus::ShareableOutcome::kOperatingSystem:
      return cr::record_local_error(cudaErrorOperatingSystem);
    default:
      return cr::record_local_error(cudaErrorInvalidValue);
  }
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t
cudaMemPoolExportToShareableHandle(void* shareableHandle, cudaMemPool_t memPool,
                                   cudaMemAllocationHandleType handleType, unsigned int flags) {
  if (shareableHandle == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  const auto type = static_cast<uint32_t>(handleType);
  if (const auto outcome = gvirtus::shareable_type(type);
      outcome != gvirtus::ShareableOutcome::kDone) {
    return status_of(outcome);
  }
  std::vector<std::byte> blob;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaMemPoolExportToShareableHandle,
      [&](gvirtus::WireWriter& w) {
        gvirtus::put_record(
            w, gvirtus::ShareableRequest{reinterpret_cast<uintptr_t>(memPool), type, flags});
      },
      [&](gvirtus::WireReader& r) {
        const auto bytes = r.get_blob(gvirtus::kFabricHandleBytes);
        blob.assign(bytes.begin(), bytes.end());
      });
  if (result != cudaSuccess) return result;
  return status_of(gvirtus::give_shareable(type, blob, shareableHandle));
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaMemPoolImportFromShareableHandle(cudaMemPool_t* memPool, void* shareableHandle,
                                     cudaMemAllocationHandleType handleType, unsigned int flags) {
  if (memPool == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  const auto type = static_cast<uint32_t>(handleType);
  if (const auto outcome = gvirtus::shareable_type(type);
      outcome != gvirtus::ShareableOutcome::kDone) {
    return status_of(outcome);
  }
  std::vector<std::byte> blob;
  if (const auto outcome = gvirtus::take_shareable(type, shareableHandle, blob);
      outcome != gvirtus::ShareableOutcome::kDone) {
    return status_of(outcome);
  }
  uint64_t pool = 0;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaMemPoolImportFromShareableHandle,
      [&](gvirtus::WireWriter& w) {
        gvirtus::put_record(w, gvirtus::ShareableRequest{0, type, flags});
        w.put_blob(blob.data(), blob.size());
      },
      [&](gvirtus::WireReader& r) { pool = r.get<uint64_t>(); });
  if (result == cudaSuccess)
    *memPool = reinterpret_cast<cudaMemPool_t>(static_cast<uintptr_t>(pool));
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemPoolExportPointer(cudaMemPoolPtrExportData* exportData,
                                                           void* ptr) {
  if (exportData == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  return cr::remote_sync(
      cr::Fn::cudaMemPoolExportPointer,
      [&](gvirtus::WireWriter& w) { w.put<uint64_t>(reinterpret_cast<uintptr_t>(ptr)); },
      [&](gvirtus::WireReader& r) {
        const auto data = r.get_blob(sizeof *exportData);  // none after a failure
        if (data.size() == sizeof *exportData) {
          std::memcpy(exportData, data.data(), data.size());
        } else if (!data.empty()) {
          gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "pointer export data");
        }
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemPoolImportPointer(void** ptr, cudaMemPool_t memPool,
                                                           cudaMemPoolPtrExportData* exportData) {
  if (ptr == nullptr || exportData == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  uint64_t pointer = 0, bytes = 0;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaMemPoolImportPointer,
      [&](gvirtus::WireWriter& w) {
        w.put<uint64_t>(reinterpret_cast<uintptr_t>(memPool));
        w.put_blob(exportData, sizeof *exportData);
      },
      [&](gvirtus::WireReader& r) {
        pointer = r.get<uint64_t>();
        bytes = r.get<uint64_t>();
      });
  if (result != cudaSuccess) return result;
  *ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(pointer));
  if (bytes != 0) cr::note_allocated(cr::Fn::cudaMemPoolImportPointer, *ptr, bytes);
  return cudaSuccess;
}

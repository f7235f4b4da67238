// cudaIpcOpenMemHandle and cudaIpcCloseMemHandle (custom rows 184-185; wire: backend/ipc.h): the
// opened range is recorded as device memory, as the stub's own allocations are, so that
// cudaMemcpyDefault and the memsets and copies sent ahead treat it as natively.
#include <cstring>

#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaIpcOpenMemHandle(void** devPtr, cudaIpcMemHandle_t handle,
                                                       unsigned int flags) {
  if (devPtr == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  uint64_t ptr = 0, bytes = 0;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaIpcOpenMemHandle,
      [&](gvirtus::WireWriter& w) {
        w.put_raw(&handle, sizeof handle);
        w.put<uint32_t>(flags);
      },
      [&](gvirtus::WireReader& r) {
        ptr = r.get<uint64_t>();
        bytes = r.get<uint64_t>();
      });
  if (result != cudaSuccess) return result;
  *devPtr = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
  if (bytes != 0) cr::note_allocated(cr::Fn::cudaIpcOpenMemHandle, *devPtr, bytes);
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaIpcCloseMemHandle(void* devPtr) {
  const uint64_t clock = cr::allocation_clock();
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaIpcCloseMemHandle,
      [&](gvirtus::WireWriter& w) { w.put<uint64_t>(reinterpret_cast<uintptr_t>(devPtr)); },
      [](gvirtus::WireReader&) {});
  if (result == cudaSuccess) cr::note_freed(cr::Fn::cudaIpcCloseMemHandle, devPtr, clock);
  return result;
}

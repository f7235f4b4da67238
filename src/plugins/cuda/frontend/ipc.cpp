// IPC memory of the client libcuda.so.1 (wire: common/driver_wire.h; backend/ipc.h): another
// application's allocation, opened through the backend, is recorded as device memory, as the
// stub's own allocations are, so that copies between unified addresses treat it as natively.
// CUDA 13's cuIpcOpenMemHandle is the _v2 ABI; the first one (the same arguments) is kept for
// programs that ask for it by name.
#include <cuda.h>

#include "cuda_remote_calls.h"
#include "plugins/cuda/frontend/memory_ranges.h"

namespace cr = gvirtus::cuda;

namespace gvirtus::cuda {
namespace {

CUresult open_memory(CUdeviceptr* pdptr, const CUipcMemHandle& handle, unsigned int flags) {
  if (pdptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t address = 0, bytes = 0;
  const CUresult result = remote_sync(
      Fn::cuIpcOpenMemHandle_v2,
      [&](WireWriter& w) {
        w.put_raw(&handle, sizeof handle);
        w.put<uint32_t>(flags);
      },
      [&](WireReader& r) {
        address = r.get<uint64_t>();
        bytes = r.get<uint64_t>();
      });
  if (result != CUDA_SUCCESS) return result;
  *pdptr = address;
  if (bytes != 0) note_allocated(Fn::cuIpcOpenMemHandle_v2, address, bytes);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gvirtus::cuda

#undef cuIpcOpenMemHandle
extern "C" CUresult cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                       unsigned int Flags);

extern "C" __attribute__((visibility("default"))) CUresult cuIpcOpenMemHandle_v2(
    CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return cr::open_memory(pdptr, handle, Flags);
}

extern "C" __attribute__((visibility("default"))) CUresult cuIpcOpenMemHandle(CUdeviceptr* pdptr,
                                                                              CUipcMemHandle handle,
                                                                              unsigned int Flags) {
  return cr::open_memory(pdptr, handle, Flags);
}

extern "C" __attribute__((visibility("default"))) CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
  const uint64_t clock = cr::allocation_clock();
  const CUresult result = cr::remote_sync(
      cr::Fn::cuIpcCloseMemHandle, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(dptr); },
      [](gvirtus::WireReader&) {});
  if (result == CUDA_SUCCESS) cr::note_freed(cr::Fn::cuIpcCloseMemHandle, dptr, clock);
  return result;
}

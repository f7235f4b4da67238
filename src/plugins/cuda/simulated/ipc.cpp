// IPC on the simulated device. A handle names what it was made from: an 8-byte tag, the exporting
// process, the address (or event) and, for memory, the allocation's size. The simulated device's
// memory is each backend process's own, so opening another process's memory gives an allocation
// of the same size standing for it: the opening session's copies and launches reach it as they
// would the shared one, but its bytes are not the exporter's (nothing here is GPU evidence). An
// opened allocation is closed by cuIpcCloseMemHandle, never freed by cuMemFree.
#include <unistd.h>

#include <cstring>

#include "named_handle.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

constexpr char kMemoryTag[8] = {'g', 'v', 's', 'i', 'm', 'm', 'e', 'm'};
constexpr char kEventTag[8] = {'g', 'v', 's', 'i', 'm', 'e', 'v', 't'};

using sim::name;
using sim::Named;
using sim::read;

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  return sim::guarded([&](sim::State& s) {
    if (pHandle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto allocation = s.allocation_bytes.find(dptr);  // the start of an allocation
    if (allocation == s.allocation_bytes.end() || s.module_memory.count(dptr) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    name(*pHandle, kMemoryTag, dptr, allocation->second);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                                        unsigned int Flags) {
  Named named{};
  if (pdptr == nullptr || (Flags & ~unsigned{CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS}) != 0 ||
      !read(handle, kMemoryTag, named) || named.bytes == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // The driver refuses a handle of the calling process's own memory.
  if (named.process == static_cast<uint64_t>(::getpid())) return CUDA_ERROR_INVALID_CONTEXT;
  CUdeviceptr opened = 0;
  if (const CUresult r = cuMemAlloc_v2(&opened, named.bytes); r != CUDA_SUCCESS) return r;
  sim::guarded([&](sim::State& s) {
    s.ipc_opened.insert(opened);
    return CUDA_SUCCESS;
  });
  *pdptr = opened;
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
  const CUresult known = sim::guarded([&](sim::State& s) {
    return s.ipc_opened.erase(dptr) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
  return known == CUDA_SUCCESS ? cuMemFree_v2(dptr) : known;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) {
  return sim::guarded([&](sim::State& s) {
    if (pHandle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (s.events.count(event) == 0) return CUDA_ERROR_INVALID_HANDLE;
    name(*pHandle, kEventTag, reinterpret_cast<uintptr_t>(event), 0);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) {
  Named named{};
  if (phEvent == nullptr || !read(handle, kEventTag, named)) return CUDA_ERROR_INVALID_VALUE;
  if (named.process == static_cast<uint64_t>(::getpid())) return CUDA_ERROR_INVALID_CONTEXT;
  return cuEventCreate(phEvent, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS);
}

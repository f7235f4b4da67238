// Registered host memory on the simulated device: a registered range is device memory too, at its
// own address, as unified addressing maps page-locked memory natively. The backend registers the
// blocks of the session's shared memory this way, so a copy or memset through the device pointer
// reaches the very pages the client maps.
#include "state.h"

namespace sim = gvirtus::simulated;

GVIRTUS_SIMULATED_EXPORT CUresult cuMemHostRegister_v2(void* p, size_t bytesize,
                                                       unsigned int Flags) {
  return sim::guarded([&](sim::State& s) {
    constexpr unsigned kKnown = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    if (p == nullptr || bytesize == 0 || (Flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
    if (s.registered_host.overlaps(p, bytesize)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    s.registered_host.add(p, bytesize, Flags);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemHostUnregister(void* p) {
  return sim::guarded([&](sim::State& s) {
    return s.registered_host.remove(p) ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p,
                                                               unsigned int Flags) {
  return sim::guarded([&](sim::State& s) {
    if (pdptr == nullptr || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (!s.registered_host.find(p)) return CUDA_ERROR_INVALID_VALUE;
    *pdptr = reinterpret_cast<uintptr_t>(p);
    return CUDA_SUCCESS;
  });
}

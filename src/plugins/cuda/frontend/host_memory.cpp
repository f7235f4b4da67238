// Host memory in driver mode: page-locked host memory is the client's own, page-aligned memory
// (the backend's GPU cannot reach memory on another machine), recorded so that copies and
// queries know it. Its device pointer does not exist: cuMemHostGetDevicePointer says so with
// CUDA_ERROR_NOT_SUPPORTED (kernels cannot read the client's memory over a network; shared
// memory with the backend, as the runtime stub has over shm, is not built for the driver yet).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/log.h"
#include "plugins/cuda/frontend/memory_ranges.h"

namespace gvirtus::cuda {

bool host_mapped(const void* address, size_t bytes) {
  if (address == nullptr) return false;
  if (bytes == 0) return true;
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(address) / page * page;
  const uintptr_t last = reinterpret_cast<uintptr_t>(address) + (bytes - 1);
  if (last < start) return false;  // wraps around
  unsigned char residency[4096];   // one byte per page, 16 MiB of 4 KiB pages a call
  for (uintptr_t at = start; at <= last;) {
    const uintptr_t pages = std::min<uintptr_t>((last - at) / page + 1, sizeof residency);
    if (::mincore(reinterpret_cast<void*>(at), pages * page, residency) != 0) return false;
    at += pages * page;
    if (at == 0) break;  // reached the top of the address space
  }
  return true;
}

AddressRanges& device_ranges() {
  static auto* ranges = new AddressRanges;  // never destroyed: used until the process ends
  return *ranges;
}
AddressRanges& host_allocations() {
  static auto* ranges = new AddressRanges;
  return *ranges;
}
AddressRanges& host_registrations() {
  static auto* ranges = new AddressRanges;
  return *ranges;
}

void note_allocated(Fn, CUdeviceptr address, uint64_t bytes) {
  device_ranges().add(as_pointer(address), bytes, 0);
}

void note_freed(Fn, CUdeviceptr address) {
  device_ranges().remove(as_pointer(address));
}

namespace {

constexpr unsigned kHostAllocFlags =
    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
constexpr unsigned kHostRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                        CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;

CUresult host_alloc(void** pp, size_t bytes, unsigned flags) {
  if (pp == nullptr || (flags & ~kHostAllocFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  host_allocations().add(memory, bytes, flags);
  *pp = memory;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuMemAllocHost_v2(void** pp,
                                                                             size_t bytesize) {
  return cr::host_alloc(pp, bytesize, 0);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostAlloc(void** pp,
                                                                          size_t bytesize,
                                                                          unsigned int Flags) {
  return cr::host_alloc(pp, bytesize, Flags);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemFreeHost(void* p) {
  const auto range = cr::host_allocations().find(p);
  if (!range || range->start != reinterpret_cast<uintptr_t>(p)) return CUDA_ERROR_INVALID_VALUE;
  cr::host_allocations().remove(p);
  ::munmap(p, range->bytes);
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostGetFlags(unsigned int* pFlags,
                                                                             void* p) {
  if (pFlags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto range = cr::host_allocations().find(p);
  if (!range) range = cr::host_registrations().find(p);
  if (!range) return CUDA_ERROR_INVALID_VALUE;
  *pFlags = range->flags;
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostRegister_v2(
    void* p, size_t bytesize, unsigned int Flags) {
  if (p == nullptr || bytesize == 0 || (Flags & ~cr::kHostRegisterFlags) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (cr::host_registrations().overlaps(p, bytesize) ||
      cr::host_allocations().overlaps(p, bytesize)) {
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  }
  cr::host_registrations().add(p, bytesize, Flags);
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostUnregister(void* p) {
  return cr::host_registrations().remove(p) ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostGetDevicePointer_v2(
    CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  if (pdptr == nullptr || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!cr::host_allocations().find(p) && !cr::host_registrations().find(p)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    GVIRTUS_LOG(kWarning) << "libcuda.so.1: mapped host memory has no device pointer in driver "
                             "mode (the backend's GPU cannot reach this machine's memory)";
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

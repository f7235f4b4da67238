// Shareable handles on the simulated device (POSIX descriptors only; no fabric).
//  - A physical allocation is a memfd already: its export is a duplicate of it, and its import
//    maps the same pages, so two sessions (two backend processes) share the bytes as two
//    processes share a GPU allocation.
//  - A pool's export is a memfd naming it (a tag, the exporting process, the pool); its import
//    makes a pool standing for it. A pointer's export data names the allocation (a tag, the
//    process, the address, the size); its import, into an imported pool, gives an allocation of
//    the same size standing for it, as the simulated IPC does: the importing session's copies and
//    launches reach it, but its bytes are not the exporter's (nothing here is GPU evidence).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "named_handle.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

constexpr char kPoolTag[8] = {'g', 'v', 's', 'i', 'm', 'p', 'o', 'l'};
constexpr char kPointerTag[8] = {'g', 'v', 's', 'i', 'm', 'p', 't', 'r'};

using sim::Named;

int descriptor_of(const void* handle) {
  return static_cast<int>(reinterpret_cast<intptr_t>(handle));
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult
cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool pool,
                                 CUmemAllocationHandleType handleType, unsigned long long flags) {
  return sim::guarded([&](sim::State& s) {
    if (handle_out == nullptr || flags != 0 ||
        handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        s.exportable_pools.count(pool) == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const int fd = ::memfd_create("gvirtus-simulated-pool", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    const Named n = sim::named(kPoolTag, reinterpret_cast<uintptr_t>(pool), 0);
    if (::pwrite(fd, &n, sizeof n, 0) != static_cast<ssize_t>(sizeof n)) {
      ::close(fd);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    std::memcpy(handle_out, &fd, sizeof fd);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* handle,
                                   CUmemAllocationHandleType handleType, unsigned long long flags) {
  return sim::guarded([&](sim::State& s) {
    Named n{};
    if (pool_out == nullptr || flags != 0 ||
        handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        ::pread(descriptor_of(handle), &n, sizeof n, 0) != static_cast<ssize_t>(sizeof n) ||
        std::memcmp(n.tag, kPoolTag, sizeof n.tag) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto* created = reinterpret_cast<CUmemoryPool>(new char);
    s.own_pools.insert(created);
    s.imported_pools.insert(created);
    *pool_out = created;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out,
                                                         CUdeviceptr ptr) {
  return sim::guarded([&](sim::State& s) {
    const auto allocation = s.allocation_bytes.find(ptr);  // the start of an allocation
    if (shareData_out == nullptr || allocation == s.allocation_bytes.end()) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    sim::name(*shareData_out, kPointerTag, ptr, allocation->second);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool pool,
                                                         CUmemPoolPtrExportData* shareData) {
  Named n{};
  const CUresult checked = sim::guarded([&](sim::State& s) {
    if (ptr_out == nullptr || shareData == nullptr || s.imported_pools.count(pool) == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return sim::read(*shareData, kPointerTag, n) && n.bytes != 0 ? CUDA_SUCCESS
                                                                 : CUDA_ERROR_INVALID_VALUE;
  });
  if (checked != CUDA_SUCCESS) return checked;
  // Into the pool's device, with or without a current context (NVIDIA's runtime makes none
  // current for it).
  return sim::guarded([&](sim::State& s) { return sim::allocate_memory(s, n.bytes, ptr_out); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemExportToShareableHandle(void* shareableHandle,
                                                               CUmemGenericAllocationHandle handle,
                                                               CUmemAllocationHandleType handleType,
                                                               unsigned long long flags) {
  return sim::guarded([&](sim::State& s) {
    const auto it = s.physical.find(handle);
    if (shareableHandle == nullptr || flags != 0 ||
        handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || it == s.physical.end() ||
        it->second->references == 0 ||
        (it->second->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const int fd = ::fcntl(it->second->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    std::memcpy(shareableHandle, &fd, sizeof fd);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemImportFromShareableHandle(
    CUmemGenericAllocationHandle* handle, void* osHandle, CUmemAllocationHandleType shHandleType) {
  return sim::guarded([&](sim::State& s) {
    struct stat st {};
    const int given = descriptor_of(osHandle);
    if (handle == nullptr || shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        ::fstat(given, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const auto bytes = static_cast<uint64_t>(st.st_size);
    if (bytes > sim::kDeviceBytes - s.allocated) return CUDA_ERROR_OUT_OF_MEMORY;
    const int fd = ::fcntl(given, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    s.allocated += bytes;  // given back by its release, as a created one's
    auto physical = std::make_unique<sim::Physical>(fd, bytes);
    physical->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    physical->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    physical->prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    *handle = s.next_physical++;
    s.physical.emplace(*handle, std::move(physical));
    return CUDA_SUCCESS;
  });
}

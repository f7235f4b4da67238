// Memory pools of the accepting device (accepting_device.cpp, a test double, never GPU evidence):
// enough of them for a program that shares a pool between two applications to run through the
// runtime stub (tests/cudart/pool_sharing_test.cpp). A pool hands out the device's cudaMalloc
// memory; one made with a POSIX descriptor type exports a memfd naming it (a tag and the pool),
// whose import makes a pool standing for it; a pointer's export data names the allocation (a tag
// and its size), whose import gives an allocation of that size standing for it. The device's
// memory is each backend process's own, so an imported allocation's bytes are not the
// exporter's: a test checks what reached the device, not what a GPU would share.
#include <cuda_runtime_api.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#define ACCEPTING_DEVICE_EXPORT __attribute__((visibility("default")))

namespace {

constexpr char kPoolTag[8] = {'a', 'c', 'c', 'p', 'o', 'o', 'l', 0};
constexpr char kPointerTag[8] = {'a', 'c', 'c', 'p', 't', 'r', 0, 0};

struct Named {
  char tag[8];
  uint64_t object;
  uint64_t bytes;
};
static_assert(sizeof(Named) <= sizeof(cudaMemPoolPtrExportData));

struct Pools {
  std::mutex mutex;
  std::set<cudaMemPool_t> made, exportable;
  std::map<const void*, size_t> allocations;  // from pools, by start: what a pointer export names
};

Pools& pools() {
  static auto& p = *new Pools;
  return p;
}

cudaMemPool_t new_pool() {
  return reinterpret_cast<cudaMemPool_t>(new char);  // a distinct address, ours
}

}  // namespace

extern "C" {

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool,
                                                      const cudaMemPoolProps* props) {
  if (pool == nullptr || props == nullptr ||
      (props->handleTypes & ~cudaMemHandleTypePosixFileDescriptor) != 0) {
    return cudaErrorInvalidValue;
  }
  std::lock_guard lock(pools().mutex);
  *pool = new_pool();
  pools().made.insert(*pool);
  if (props->handleTypes != cudaMemHandleTypeNone) pools().exportable.insert(*pool);
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  std::lock_guard lock(pools().mutex);
  if (pools().made.erase(pool) == 0) return cudaErrorInvalidValue;
  pools().exportable.erase(pool);
  delete reinterpret_cast<char*>(pool);
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size,
                                                            cudaMemPool_t pool, cudaStream_t) {
  {
    std::lock_guard lock(pools().mutex);
    if (pools().made.count(pool) == 0) return cudaErrorInvalidValue;
  }
  const cudaError_t result = cudaMalloc(ptr, size);
  if (result == cudaSuccess) {
    std::lock_guard lock(pools().mutex);
    pools().allocations[*ptr] = size;
  }
  return result;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t) {
  std::lock_guard lock(pools().mutex);
  pools().allocations.erase(ptr);
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemPoolExportToShareableHandle(
    void* handle, cudaMemPool_t pool, cudaMemAllocationHandleType type, unsigned int flags) {
  std::lock_guard lock(pools().mutex);
  if (handle == nullptr || flags != 0 || type != cudaMemHandleTypePosixFileDescriptor ||
      pools().exportable.count(pool) == 0) {
    return cudaErrorInvalidValue;
  }
  const int fd = ::memfd_create("accepting-device-pool", MFD_CLOEXEC);
  Named named{};
  std::memcpy(named.tag, kPoolTag, sizeof named.tag);
  named.object = reinterpret_cast<uintptr_t>(pool);
  if (fd < 0 || ::pwrite(fd, &named, sizeof named, 0) != static_cast<ssize_t>(sizeof named)) {
    if (fd >= 0) ::close(fd);
    return cudaErrorMemoryAllocation;
  }
  std::memcpy(handle, &fd, sizeof fd);
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemPoolImportFromShareableHandle(
    cudaMemPool_t* pool, void* handle, cudaMemAllocationHandleType type, unsigned int flags) {
  Named named{};
  if (pool == nullptr || flags != 0 || type != cudaMemHandleTypePosixFileDescriptor ||
      ::pread(static_cast<int>(reinterpret_cast<intptr_t>(handle)), &named, sizeof named, 0) !=
          static_cast<ssize_t>(sizeof named) ||
      std::memcmp(named.tag, kPoolTag, sizeof named.tag) != 0) {
    return cudaErrorInvalidValue;
  }
  std::lock_guard lock(pools().mutex);
  *pool = new_pool();
  pools().made.insert(*pool);
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemPoolExportPointer(cudaMemPoolPtrExportData* data,
                                                             void* ptr) {
  std::lock_guard lock(pools().mutex);
  const auto it = pools().allocations.find(ptr);
  if (data == nullptr || it == pools().allocations.end()) return cudaErrorInvalidValue;
  *data = cudaMemPoolPtrExportData{};
  Named named{};
  std::memcpy(named.tag, kPointerTag, sizeof named.tag);
  named.object = reinterpret_cast<uintptr_t>(ptr);
  named.bytes = it->second;
  std::memcpy(data->reserved, &named, sizeof named);
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemPoolImportPointer(void** ptr, cudaMemPool_t pool,
                                                             cudaMemPoolPtrExportData* data) {
  Named named{};
  {
    std::lock_guard lock(pools().mutex);
    if (ptr == nullptr || data == nullptr || pools().made.count(pool) == 0) {
      return cudaErrorInvalidValue;
    }
    std::memcpy(&named, data->reserved, sizeof named);
    if (std::memcmp(named.tag, kPointerTag, sizeof named.tag) != 0) return cudaErrorInvalidValue;
  }
  return cudaMalloc(ptr, named.bytes);
}

}  // extern "C"

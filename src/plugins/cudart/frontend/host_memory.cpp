// Page-locked host memory. Over a transport that shares memory with the backend (shm),
// cudaMallocHost/cudaHostAlloc place it there and the backend registers it with the GPU
// (shared_host.h): copies to and from it move no bytes through the transport, and
// cudaHostAllocMapped memory has a device pointer that kernels use. Otherwise (tcp, or the arena
// is full) they return page-aligned memory of the client, as the real ones are, which the GPU
// cannot reach: copies carry its bytes, and its device pointer does not exist. cudaHostRegister
// records the range. The client's own page-locked memory, allocated or registered, is named to
// the transport too (gvirtus_host_memory_register), so that rdma sends copies from it without a
// staging copy; it is taken back before the memory is freed or unregistered. All are tracked
// (address_ranges.h) so that cudaMemcpyDefault, cudaPointerGetAttributes and cudaHostGetFlags
// answer as natively.
#include <sys/mman.h>

#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/not_supported.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

constexpr unsigned kHostAllocFlags =
    cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
constexpr unsigned kHostRegisterFlags = cudaHostRegisterPortable | cudaHostRegisterMapped |
                                        cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;

cudaError_t host_alloc(void** ptr, size_t size, unsigned flags) {
  if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) return init;
  if (ptr == nullptr || (flags & ~kHostAllocFlags) != 0) {
    return record_local_error(cudaErrorInvalidValue);
  }
  if (size == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  SharedHostPlacement shared;
  if (const cudaError_t rc = shared_host_alloc(size, flags, shared); rc != cudaSuccess) return rc;
  void* memory = shared.ptr;
  if (!shared.placed) {
    memory = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return record_local_error(cudaErrorMemoryAllocation);
    process_session::register_host_memory(memory, size);  // rdma sends straight from it
  }
  host_allocations().add(memory, size, flags);
  *ptr = memory;
  return cudaSuccess;
}

// The page-locked host range holding `ptr`, whether allocated or registered.
std::optional<AddressRanges::Range> page_locked(const void* ptr) {
  if (auto range = host_allocations().find(ptr)) return range;
  return host_registrations().find(ptr);
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return cr::host_alloc(ptr, size, cudaHostAllocDefault);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned flags) {
  return cr::host_alloc(ptr, size, flags);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFreeHost(void* ptr) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) return init;
  if (ptr == nullptr) return cudaSuccess;
  const auto range = cr::host_allocations().take(ptr);
  if (!range) return cr::record_local_error(cudaErrorInvalidValue);
  if (const auto shared = cr::shared_host_free(ptr)) return *shared;
  gvirtus::process_session::unregister_host_memory(ptr, range->bytes);
  ::munmap(ptr, range->bytes);
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned flags) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) return init;
  if (ptr == nullptr || size == 0 || (flags & ~cr::kHostRegisterFlags) != 0) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  if (cr::host_registrations().overlaps(ptr, size) || cr::host_allocations().overlaps(ptr, size)) {
    return cr::record_local_error(cudaErrorHostMemoryAlreadyRegistered);
  }
  cr::host_registrations().add(ptr, size, flags);
  gvirtus::process_session::register_host_memory(ptr, size);
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaHostUnregister(void* ptr) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) return init;
  if (ptr == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  const auto range = cr::host_registrations().take(ptr);
  if (!range) {
    return cr::record_local_error(cudaErrorHostMemoryNotRegistered);
  }
  gvirtus::process_session::unregister_host_memory(ptr, range->bytes);
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaHostGetFlags(unsigned* flags, void* ptr) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) return init;
  const auto range = cr::host_allocations().find(ptr);
  if (flags == nullptr || !range) return cr::record_local_error(cudaErrorInvalidValue);
  *flags = range->flags;
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes,
                                                           const void* ptr) {
  // Plain device memory the stub saw allocated is answered from its record.
  if (const auto device = cr::device_allocations().find(ptr);
      device && attributes != nullptr && (device->flags & cr::kPlainDeviceMemory) != 0 &&
      device->device >= 0) {
    *attributes = cudaPointerAttributes{};
    attributes->type = cudaMemoryTypeDevice;
    attributes->device = device->device;
    attributes->devicePointer = const_cast<void*>(ptr);
    attributes->hostPointer = nullptr;
    return cudaSuccess;
  }
  const auto range = cr::page_locked(ptr);
  if (!range) return cr::remote::cudaPointerGetAttributes(attributes, ptr);  // device or unknown
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) return init;
  if (attributes == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  int device = 0;
  if (const cudaError_t rc = cudaGetDevice(&device); rc != cudaSuccess) return rc;
  attributes->type = cudaMemoryTypeHost;
  attributes->device = device;
  attributes->hostPointer = const_cast<void*>(ptr);
  // Only shared memory registered as mapped has one; the GPU cannot reach the client's own.
  attributes->devicePointer = cr::shared_host_device_pointer(ptr).value_or(nullptr);
  return cudaSuccess;
}

// Device pointers of host memory exist only where the GPU can reach the memory: mapped memory in
// the shared arena. Elsewhere (a network transport) this is cudaErrorNotSupported for page-locked
// memory (and, as natively, cudaErrorInvalidValue for any other pointer).
GVIRTUS_CUDART_EXPORT cudaError_t cudaHostGetDevicePointer(void** device, void* host,
                                                           unsigned flags) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) return init;
  if (device == nullptr || flags != 0 || !cr::page_locked(host)) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  if (const auto mapped = cr::shared_host_device_pointer(host)) {
    *device = *mapped;
    return cudaSuccess;
  }
  static std::atomic<bool> logged{false};
  return static_cast<cudaError_t>(cr::not_supported("cudaHostGetDevicePointer", logged));
}

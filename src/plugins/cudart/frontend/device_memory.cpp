// Device allocations, remoted and recorded (address_ranges.h) with the device they live on, so
// that cudaMemcpyDefault and cudaPointerGetAttributes know device pointers from host ones, and
// cudaDeviceReset forgets what it frees.
#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

// The calling thread's current device (answered in the stub once known), -1 if it fails.
int current_device() {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

cudaError_t recorded(cudaError_t rc, void** ptr, size_t bytes,
                     unsigned flags = cr::kPlainDeviceMemory) {
  if (rc == cudaSuccess && ptr != nullptr && *ptr != nullptr) {
    cr::device_allocations().add(*ptr, bytes, flags, current_device());
  }
  return rc;
}

cudaError_t forgotten(cudaError_t rc, void* ptr) {
  if (rc == cudaSuccess && ptr != nullptr) cr::device_allocations().remove(ptr);
  return rc;
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaMalloc(void** ptr, size_t size) {
  return recorded(cr::remote::cudaMalloc(ptr, size), ptr, size);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width,
                                                  size_t height) {
  const cudaError_t rc = cr::remote::cudaMallocPitch(ptr, pitch, width, height);
  return recorded(rc, ptr, rc == cudaSuccess && pitch != nullptr ? *pitch * height : 0);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
  // The stream's device, which may not be the current one: attributes are asked remotely.
  return recorded(cr::remote::cudaMallocAsync(ptr, size, stream), ptr, size, 0);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size,
                                                          cudaMemPool_t pool, cudaStream_t stream) {
  return recorded(cr::remote::cudaMallocFromPoolAsync(ptr, size, pool, stream), ptr, size, 0);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent) {
  const cudaError_t rc = cr::remote::cudaMalloc3D(pitched, extent);
  if (rc == cudaSuccess && pitched != nullptr && pitched->ptr != nullptr) {
    cr::device_allocations().add(pitched->ptr, pitched->pitch * extent.height * extent.depth,
                                 cr::kPlainDeviceMemory, current_device());
  }
  return rc;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFree(void* ptr) {
  return forgotten(cr::remote::cudaFree(ptr), ptr);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  return forgotten(cr::remote::cudaFreeAsync(ptr, stream), ptr);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaDeviceReset() {
  const int device = current_device();
  const cudaError_t rc = cr::remote::cudaDeviceReset();
  // Every allocation of the device is gone, whatever the result says: forget them all, so that a
  // stale record never makes a later copy of that address look like a valid device copy.
  cr::device_allocations().remove_device(device);
  return rc;
}

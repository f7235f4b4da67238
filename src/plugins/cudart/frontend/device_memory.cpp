// Device allocations, remoted and recorded (address_ranges.h) so that cudaMemcpyDefault and
// cudaPointerGetAttributes know device pointers from host ones.
#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

cudaError_t recorded(cudaError_t rc, void** ptr, size_t bytes) {
  if (rc == cudaSuccess && ptr != nullptr && *ptr != nullptr) {
    cr::device_allocations().add(*ptr, bytes, 0);
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
  return recorded(cr::remote::cudaMallocAsync(ptr, size, stream), ptr, size);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size,
                                                          cudaMemPool_t pool, cudaStream_t stream) {
  return recorded(cr::remote::cudaMallocFromPoolAsync(ptr, size, pool, stream), ptr, size);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent) {
  const cudaError_t rc = cr::remote::cudaMalloc3D(pitched, extent);
  if (rc == cudaSuccess && pitched != nullptr && pitched->ptr != nullptr) {
    cr::device_allocations().add(pitched->ptr, pitched->pitch * extent.height * extent.depth, 0);
  }
  return rc;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFree(void* ptr) {
  return forgotten(cr::remote::cudaFree(ptr), ptr);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  return forgotten(cr::remote::cudaFreeAsync(ptr, stream), ptr);
}

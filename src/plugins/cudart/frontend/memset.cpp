// Memsets. One that the stub can tell is within a device allocation it saw succeed
// (address_ranges.h) cannot fail at once, so it is sent without waiting, whatever its form
// (cudaMemset included: natively it returns before the device is done too); a later failure
// surfaces as asynchronous errors do. Any other waits, so the runtime's immediate error (an
// invalid pointer, say) comes back exactly.
#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {

// Whether [ptr, ptr + bytes) lies in one device allocation.
bool within_device_allocation(const void* ptr, size_t bytes) {
  const auto range = device_allocations().find(ptr);
  if (!range) return false;
  const uintptr_t offset = reinterpret_cast<uintptr_t>(ptr) - range->start;
  return bytes <= range->bytes - offset;
}

namespace {

// The bytes a pitched region spans, or 0 if its shape is one the runtime may reject.
size_t span_2d(size_t pitch, size_t width, size_t height) {
  if (width > pitch || height == 0 || width == 0) return 0;
  return pitch * (height - 1) + width;
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemset(void* ptr, int value, size_t count) {
  if (count > 0 && cr::within_device_allocation(ptr, count)) {
    return cr::remote::ahead::cudaMemset(ptr, value, count);
  }
  return cr::remote::cudaMemset(ptr, value, count);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count,
                                                  cudaStream_t stream) {
  if (count > 0 && cr::within_device_allocation(ptr, count)) {
    return cr::remote::ahead::cudaMemsetAsync(ptr, value, count, stream);
  }
  return cr::remote::cudaMemsetAsync(ptr, value, count, stream);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemset2D(void* ptr, size_t pitch, int value, size_t width,
                                               size_t height) {
  const size_t span = cr::span_2d(pitch, width, height);
  if (span > 0 && cr::within_device_allocation(ptr, span)) {
    return cr::remote::ahead::cudaMemset2D(ptr, pitch, value, width, height);
  }
  return cr::remote::cudaMemset2D(ptr, pitch, value, width, height);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemset2DAsync(void* ptr, size_t pitch, int value,
                                                    size_t width, size_t height,
                                                    cudaStream_t stream) {
  const size_t span = cr::span_2d(pitch, width, height);
  if (span > 0 && cr::within_device_allocation(ptr, span)) {
    return cr::remote::ahead::cudaMemset2DAsync(ptr, pitch, value, width, height, stream);
  }
  return cr::remote::cudaMemset2DAsync(ptr, pitch, value, width, height, stream);
}

// Test support, preloaded into a backend on a machine without a GPU: a device that accepts every
// copy into its memory. NVIDIA's runtime answers the stub's first call (cudaFree(nullptr)) with
// cudaErrorInsufficientDriver there, after which the stub answers every copy with that error
// itself and sends no bytes; these definitions interpose the runtime's, so that a copy's
// bytes travel as they do on a GPU machine. Its memory is the address range below (copy_loop
// copies there), which the backend's vetting finds to be device memory through
// cudaPointerGetAttributes. Host-to-host copies are done for real, so that a client can check
// what came back.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

namespace {

// Where the test device's memory is (programs/copy_loop.cpp uses the same base); no bytes are
// ever written there.
constexpr uintptr_t kDeviceBase = uintptr_t{0x600000000000};
constexpr uintptr_t kDeviceBytes = uintptr_t{1} << 40;

}  // namespace

extern "C" {

__attribute__((visibility("default"))) cudaError_t cudaFree(void*) {
  return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaPointerGetAttributes(
    cudaPointerAttributes* attributes, const void* ptr) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  const bool device = address >= kDeviceBase && address - kDeviceBase < kDeviceBytes;
  *attributes = cudaPointerAttributes{};
  attributes->type = device ? cudaMemoryTypeDevice : cudaMemoryTypeUnregistered;
  attributes->devicePointer = device ? const_cast<void*>(ptr) : nullptr;
  return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaMemcpy(void* dst, const void* src,
                                                              size_t count, cudaMemcpyKind kind) {
  if (kind == cudaMemcpyHostToHost) std::memcpy(dst, src, count);
  return cudaSuccess;  // to or from the device: no device memory, the bytes are dropped
}

}  // extern "C"

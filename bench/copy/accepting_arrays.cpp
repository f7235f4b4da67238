// CUDA arrays of the accepting device (accepting_device.cpp, a test double, never GPU evidence):
// enough of them for the runtime stub's array copies and graph copy nodes to be tested end to end
// without a GPU (tests/cudart/capture_test.cpp). An array is its descriptor and extent over rows
// of the device's own memory (cudaMalloc's), packed: width x element bytes each, height rows per
// slice (1 for a 1D array). cudaMemcpy3D reaches an array side through accepting_array_rows,
// which gives its storage as a pitched pointer; texture layouts, mipmaps and surfaces are not
// modelled.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>

#define ACCEPTING_DEVICE_EXPORT __attribute__((visibility("default")))

namespace {

struct Array {
  cudaChannelFormatDesc desc;
  cudaExtent extent;  // as given: height 0 for a 1D array, depth 0 for a 2D one
  unsigned flags;
  void* storage;     // the device's memory
  uint64_t element;  // bytes
};

std::mutex& arrays_mutex() {
  static std::mutex* const kept = new std::mutex;
  return *kept;
}

std::map<cudaArray_t, Array>& arrays() {
  static auto* const kept = new std::map<cudaArray_t, Array>;
  return *kept;
}

uint64_t element_bytes(const cudaChannelFormatDesc& d) {
  const int bits = d.x + d.y + d.z + d.w;
  return bits > 0 && bits % 8 == 0 ? static_cast<uint64_t>(bits / 8) : 0;
}

cudaError_t make(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                 unsigned flags) {
  if (array == nullptr || desc == nullptr || extent.width == 0) return cudaErrorInvalidValue;
  const uint64_t element = element_bytes(*desc);
  if (element == 0) return cudaErrorInvalidChannelDescriptor;
  const uint64_t rows = extent.height == 0 ? 1 : extent.height;
  const uint64_t slices = extent.depth == 0 ? 1 : extent.depth;
  void* storage = nullptr;
  if (const cudaError_t rc = cudaMalloc(&storage, extent.width * element * rows * slices);
      rc != cudaSuccess) {
    return rc;
  }
  // The handle: an address no other array has (the storage's, which cudaMalloc never repeats).
  *array = static_cast<cudaArray_t>(storage);
  std::lock_guard lock(arrays_mutex());
  arrays()[*array] = Array{*desc, extent, flags, storage, element};
  return cudaSuccess;
}

}  // namespace

// An array's storage as a pitched pointer and its element's bytes; false for no array of ours.
bool accepting_array_rows(cudaArray_const_t array, cudaPitchedPtr& rows, uint64_t& element) {
  std::lock_guard lock(arrays_mutex());
  const auto it = arrays().find(const_cast<cudaArray_t>(array));
  if (it == arrays().end()) return false;
  const Array& a = it->second;
  const size_t pitch = a.extent.width * a.element;
  rows = cudaPitchedPtr{a.storage, pitch, pitch, a.extent.height == 0 ? 1 : a.extent.height};
  element = a.element;
  return true;
}

extern "C" {

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMallocArray(cudaArray_t* array,
                                                    const cudaChannelFormatDesc* desc, size_t width,
                                                    size_t height, unsigned int flags) {
  return make(array, desc, cudaExtent{width, height, 0}, flags);
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t* array,
                                                      const cudaChannelFormatDesc* desc,
                                                      cudaExtent extent, unsigned int flags) {
  return make(array, desc, extent, flags);
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc,
                                                     cudaExtent* extent, unsigned int* flags,
                                                     cudaArray_t array) {
  std::lock_guard lock(arrays_mutex());
  const auto it = arrays().find(array);
  if (it == arrays().end()) return cudaErrorInvalidResourceHandle;
  if (desc != nullptr) *desc = it->second.desc;
  if (extent != nullptr) *extent = it->second.extent;
  if (flags != nullptr) *flags = it->second.flags;
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaFreeArray(cudaArray_t array) {
  std::lock_guard lock(arrays_mutex());
  // The storage stays the device's: its memory is never handed out again.
  return arrays().erase(array) != 0 ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

}  // extern "C"

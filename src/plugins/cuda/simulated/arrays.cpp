// CUDA arrays on the simulated device: host memory of the array's size, its elements in row order
// (a real array's layout is the driver's own; only offsets into it are public, and copies by
// offset see the bytes in that order here). Formats of one to four channels of 8, 16 or 32-bit
// integers, halves and floats; others (the video formats) are beyond it.
#include <cstring>

#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

size_t element_bytes(CUarray_format format) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      return 4;
    default:
      return 0;
  }
}

CUresult create(sim::State& s, CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR& d) {
  const size_t element = element_bytes(d.Format);
  if (handle == nullptr || element == 0 || d.Width == 0 ||
      (d.NumChannels != 1 && d.NumChannels != 2 && d.NumChannels != 4) ||
      (d.Depth != 0 && d.Height == 0)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const size_t rows = (d.Height == 0 ? 1 : d.Height) * (d.Depth == 0 ? 1 : d.Depth);
  const size_t row = d.Width * element * d.NumChannels;
  if (rows > sim::kDeviceBytes / row) return CUDA_ERROR_OUT_OF_MEMORY;
  auto array = std::make_unique<sim::Array>(sim::Array{d, std::vector<std::byte>(row * rows)});
  const auto created = reinterpret_cast<CUarray>(array.get());
  s.arrays.emplace(created, std::move(array));
  *handle = created;
  return CUDA_SUCCESS;
}

// [offset, offset + bytes) of an array, or null.
std::byte* array_range(sim::State& s, CUarray array, size_t offset, size_t bytes) {
  const auto found = s.arrays.find(array);
  if (found == s.arrays.end()) return nullptr;
  auto& memory = found->second->bytes;
  if (offset > memory.size() || bytes > memory.size() - offset) return nullptr;
  return memory.data() + offset;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuArrayCreate_v2(CUarray* pHandle,
                                                   const CUDA_ARRAY_DESCRIPTOR* pAllocateArray) {
  return sim::guarded([&](sim::State& s) {
    if (pAllocateArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = pAllocateArray->Width;
    d.Height = pAllocateArray->Height;
    d.Format = pAllocateArray->Format;
    d.NumChannels = pAllocateArray->NumChannels;
    return create(s, pHandle, d);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pAllocateArray) {
  return sim::guarded([&](sim::State& s) {
    if (pAllocateArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return create(s, pHandle, *pAllocateArray);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuArrayDestroy(CUarray hArray) {
  return sim::guarded([&](sim::State& s) {
    return s.arrays.erase(hArray) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* descriptor,
                                                            CUarray hArray) {
  return sim::guarded([&](sim::State& s) {
    if (descriptor == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto found = s.arrays.find(hArray);
    if (found == s.arrays.end()) return CUDA_ERROR_INVALID_HANDLE;
    *descriptor = found->second->descriptor;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* descriptor,
                                                          CUarray hArray) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  if (descriptor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUresult result = cuArray3DGetDescriptor_v2(&d, hArray);
  if (result != CUDA_SUCCESS) return result;
  if (d.Depth != 0) return CUDA_ERROR_INVALID_VALUE;  // a 3D array, as the driver says
  *descriptor = CUDA_ARRAY_DESCRIPTOR{d.Width, d.Height, d.Format, d.NumChannels};
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset,
                                                  const void* srcHost, size_t ByteCount) {
  return sim::guarded([&](sim::State& s) {
    if (srcHost == nullptr && ByteCount != 0) return CUDA_ERROR_INVALID_VALUE;
    std::byte* to = array_range(s, dstArray, dstOffset, ByteCount);
    if (to == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ByteCount != 0) std::memcpy(to, srcHost, ByteCount);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset,
                                                       const void* srcHost, size_t ByteCount,
                                                       CUstream hStream) {
  const CUresult known = sim::guarded([&](sim::State& s) {
    return sim::known_stream(s, hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
  if (known != CUDA_SUCCESS) return known;
  return cuMemcpyHtoA_v2(dstArray, dstOffset, srcHost, ByteCount);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyAtoH_v2(void* dstHost, CUarray srcArray, size_t srcOffset,
                                                  size_t ByteCount) {
  return sim::guarded([&](sim::State& s) {
    if (dstHost == nullptr && ByteCount != 0) return CUDA_ERROR_INVALID_VALUE;
    const std::byte* from = array_range(s, srcArray, srcOffset, ByteCount);
    if (from == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ByteCount != 0) std::memcpy(dstHost, from, ByteCount);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyAtoHAsync_v2(void* dstHost, CUarray srcArray,
                                                       size_t srcOffset, size_t ByteCount,
                                                       CUstream hStream) {
  const CUresult known = sim::guarded([&](sim::State& s) {
    return sim::known_stream(s, hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
  if (known != CUDA_SUCCESS) return known;
  return cuMemcpyAtoH_v2(dstHost, srcArray, srcOffset, ByteCount);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset,
                                                  CUdeviceptr srcDevice, size_t ByteCount) {
  return sim::guarded([&](sim::State& s) {
    std::byte* to = array_range(s, dstArray, dstOffset, ByteCount);
    const std::byte* from = sim::device_range(s, srcDevice, ByteCount);
    if (to == nullptr || from == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ByteCount != 0) std::memmove(to, from, ByteCount);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray,
                                                  size_t srcOffset, size_t ByteCount) {
  return sim::guarded([&](sim::State& s) {
    std::byte* to = sim::device_range(s, dstDevice, ByteCount);
    const std::byte* from = array_range(s, srcArray, srcOffset, ByteCount);
    if (to == nullptr || from == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ByteCount != 0) std::memmove(to, from, ByteCount);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset,
                                                  CUarray srcArray, size_t srcOffset,
                                                  size_t ByteCount) {
  return sim::guarded([&](sim::State& s) {
    std::byte* to = array_range(s, dstArray, dstOffset, ByteCount);
    const std::byte* from = array_range(s, srcArray, srcOffset, ByteCount);
    if (to == nullptr || from == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ByteCount != 0) std::memmove(to, from, ByteCount);
    return CUDA_SUCCESS;
  });
}

// CUDA arrays on the simulated device: host memory of the array's size, its elements in row order
// (a real array's layout is the driver's own; only offsets into it are public, and copies by
// offset see the bytes in that order here). Formats of one to four channels of 8, 16 or 32-bit
// integers, halves and floats; others (the video formats) are beyond it. Mipmapped arrays are
// their levels, arrays made at once; 2D and 3D copies with arrays copy a box of rows.
#include <algorithm>
#include <bit>
#include <cstring>

#include "plugins/cuda/common/array_formats.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

CUresult create(sim::State& s, CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR& d,
                CUmipmappedArray owner = nullptr) {
  const size_t element = gvirtus::cuda::channel_bytes(d.Format);
  if (handle == nullptr || element == 0 || d.Width == 0 ||
      (d.NumChannels != 1 && d.NumChannels != 2 && d.NumChannels != 4) ||
      (d.Depth != 0 && d.Height == 0)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const size_t rows = (d.Height == 0 ? 1 : d.Height) * (d.Depth == 0 ? 1 : d.Depth);
  const size_t row = d.Width * element * d.NumChannels;
  if (rows > sim::kDeviceBytes / row) return CUDA_ERROR_OUT_OF_MEMORY;
  auto array =
      std::make_unique<sim::Array>(sim::Array{d, std::vector<std::byte>(row * rows), owner});
  const auto created = reinterpret_cast<CUarray>(array.get());
  s.arrays.emplace(created, std::move(array));
  sim::own(s, created);
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
    const auto found = s.arrays.find(hArray);
    if (found == s.arrays.end() || found->second->owner != nullptr) {
      return CUDA_ERROR_INVALID_HANDLE;  // a level goes with its mipmapped array
    }
    s.arrays.erase(found);
    sim::disown(s, hArray);
    return CUDA_SUCCESS;
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

namespace {

// Where row (y, z) of a copy's box starts on one side: base + z x slice + y x pitch, after
// checking that the box (width bytes, height rows, depth slices from the side's corner) lies in
// the side: device memory in one allocation, an array within its extent. Host memory is the
// caller's.
struct BoxSide {
  std::byte* base;
  uint64_t pitch, slice;
};

CUresult box_side(sim::State& s, CUmemorytype type, const void* host, CUdeviceptr device,
                  CUarray array, uint64_t x, uint64_t y, uint64_t z, uint64_t pitch,
                  uint64_t height, const CUDA_MEMCPY3D& c, BoxSide& side) {
  const uint64_t width = c.WidthInBytes, rows = c.Height, slices = c.Depth;
  if (type == CU_MEMORYTYPE_ARRAY) {
    const auto found = s.arrays.find(array);
    if (found == s.arrays.end()) return CUDA_ERROR_INVALID_HANDLE;
    const auto& d = found->second->descriptor;
    const uint64_t row = d.Width * gvirtus::cuda::channel_bytes(d.Format) * d.NumChannels;
    const uint64_t array_rows = d.Height == 0 ? 1 : d.Height;
    const uint64_t array_slices = d.Depth == 0 ? 1 : d.Depth;
    if (x > row || width > row - x || y > array_rows || rows > array_rows - y || z > array_slices ||
        slices > array_slices - z) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    side = {found->second->bytes.data() + (z * array_rows + y) * row + x, row, array_rows * row};
    return CUDA_SUCCESS;
  }
  if ((rows > 1 || slices > 1) && pitch < width) return CUDA_ERROR_INVALID_VALUE;
  if (slices > 1 && height < rows) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t offset = (z * height + y) * pitch + x;
  if (type == CU_MEMORYTYPE_HOST) {
    if (host == nullptr) return CUDA_ERROR_INVALID_VALUE;
    side = {static_cast<std::byte*>(const_cast<void*>(host)) + offset, pitch, height * pitch};
    return CUDA_SUCCESS;
  }
  if (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const uint64_t span = (slices - 1) * height * pitch + (rows - 1) * pitch + width;
  std::byte* at = sim::device_range(s, device + offset, span);
  if (at == nullptr) return CUDA_ERROR_INVALID_VALUE;
  side = {at, pitch, height * pitch};
  return CUDA_SUCCESS;
}

bool empty_box(const CUDA_MEMCPY3D& c) {
  return c.WidthInBytes == 0 || c.Height == 0 || c.Depth == 0;
}

// Both sides of a copy's box, checked (an empty box copies nothing: its sides are not looked at).
CUresult box_sides(sim::State& s, const CUDA_MEMCPY3D& c, BoxSide& from, BoxSide& to) {
  if (c.srcLOD != 0 || c.dstLOD != 0 || c.reserved0 != nullptr || c.reserved1 != nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (empty_box(c)) return CUDA_SUCCESS;
  if (const CUresult r = box_side(s, c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray,
                                  c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch, c.srcHeight, c, from);
      r != CUDA_SUCCESS) {
    return r;
  }
  return box_side(s, c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, c.dstXInBytes, c.dstY,
                  c.dstZ, c.dstPitch, c.dstHeight, c, to);
}

CUresult copy_3d(const CUDA_MEMCPY3D* c, CUstream stream) {
  if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_stream(s, stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (const CUresult r = sim::not_captured(s, stream); r != CUDA_SUCCESS) return r;
    return sim::copy_box(s, *c);
  });
}

}  // namespace

CUresult sim::check_box(State& s, const CUDA_MEMCPY3D& c) {
  BoxSide from{}, to{};
  return box_sides(s, c, from, to);
}

CUresult sim::copy_box(State& s, const CUDA_MEMCPY3D& c) {
  BoxSide from{}, to{};
  if (const CUresult r = box_sides(s, c, from, to); r != CUDA_SUCCESS) return r;
  if (empty_box(c)) return CUDA_SUCCESS;
  for (uint64_t z = 0; z < c.Depth; ++z) {
    for (uint64_t y = 0; y < c.Height; ++y) {
      std::memmove(to.base + z * to.slice + y * to.pitch,
                   from.base + z * from.slice + y * from.pitch, c.WidthInBytes);
    }
  }
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D* pCopy) {
  return copy_3d(pCopy, nullptr);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* pCopy, CUstream hStream) {
  return copy_3d(pCopy, hStream);
}

// A mipmapped array: level i is the array of the first's extent halved i times (at least 1 in
// each dimension it has); no more levels than halvings of the largest dimension allow.
GVIRTUS_SIMULATED_EXPORT CUresult cuMipmappedArrayCreate(
    CUmipmappedArray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pMipmappedArrayDesc,
    unsigned int numMipmapLevels) {
  return sim::guarded([&](sim::State& s) {
    if (pHandle == nullptr || pMipmappedArrayDesc == nullptr || numMipmapLevels == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const auto& d = *pMipmappedArrayDesc;
    const size_t largest = std::max({d.Width, d.Height, d.Depth});
    if (numMipmapLevels > static_cast<unsigned>(std::bit_width(largest))) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto mipmapped = std::make_unique<sim::Mipmapped>();
    const auto handle = reinterpret_cast<CUmipmappedArray>(mipmapped.get());
    auto halved = [](size_t extent, unsigned level) {
      return extent == 0 ? 0 : std::max<size_t>(1, extent >> level);
    };
    for (unsigned level = 0; level < numMipmapLevels; ++level) {
      CUDA_ARRAY3D_DESCRIPTOR level_d = d;
      level_d.Width = halved(d.Width, level);
      level_d.Height = halved(d.Height, level);
      level_d.Depth = halved(d.Depth, level);
      CUarray array = nullptr;
      if (const CUresult r = create(s, &array, level_d, handle); r != CUDA_SUCCESS) {
        for (CUarray made : mipmapped->levels) {
          s.arrays.erase(made);
          sim::disown(s, made);
        }
        return r;
      }
      mipmapped->levels.push_back(array);
    }
    s.mipmapped.emplace(handle, std::move(mipmapped));
    *pHandle = handle;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMipmappedArrayGetLevel(CUarray* pLevelArray,
                                                           CUmipmappedArray hMipmappedArray,
                                                           unsigned int level) {
  return sim::guarded([&](sim::State& s) {
    const auto found = s.mipmapped.find(hMipmappedArray);
    if (found == s.mipmapped.end()) return CUDA_ERROR_INVALID_HANDLE;
    if (pLevelArray == nullptr || level >= found->second->levels.size()) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *pLevelArray = found->second->levels[level];
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  return sim::guarded([&](sim::State& s) {
    const auto found = s.mipmapped.find(hMipmappedArray);
    if (found == s.mipmapped.end()) return CUDA_ERROR_INVALID_HANDLE;
    for (CUarray level : found->second->levels) {
      s.arrays.erase(level);
      sim::disown(s, level);
    }
    s.mipmapped.erase(found);
    return CUDA_SUCCESS;
  });
}

CUresult sim::check_resource(State& s, const CUDA_RESOURCE_DESC& resource, bool surface) {
  switch (resource.resType) {
    case CU_RESOURCE_TYPE_ARRAY: {
      const auto found = s.arrays.find(resource.res.array.hArray);
      if (found == s.arrays.end()) return CUDA_ERROR_INVALID_HANDLE;
      if (surface && (found->second->descriptor.Flags & CUDA_ARRAY3D_SURFACE_LDST) == 0) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      return CUDA_SUCCESS;
    }
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
      if (surface) return CUDA_ERROR_INVALID_VALUE;
      return s.mipmapped.contains(resource.res.mipmap.hMipmappedArray) ? CUDA_SUCCESS
                                                                       : CUDA_ERROR_INVALID_HANDLE;
    case CU_RESOURCE_TYPE_LINEAR:
      if (surface) return CUDA_ERROR_INVALID_VALUE;
      return sim::device_range(s, resource.res.linear.devPtr, resource.res.linear.sizeInBytes) !=
                     nullptr
                 ? CUDA_SUCCESS
                 : CUDA_ERROR_INVALID_VALUE;
    case CU_RESOURCE_TYPE_PITCH2D: {
      const auto& p = resource.res.pitch2D;
      const uint64_t texel = gvirtus::cuda::channel_bytes(p.format) * p.numChannels;
      if (surface || texel == 0 || p.width == 0 || p.height == 0 ||
          p.pitchInBytes < p.width * texel) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      const uint64_t span = uint64_t{p.pitchInBytes} * (p.height - 1) + p.width * texel;
      return sim::device_range(s, p.devPtr, span) != nullptr ? CUDA_SUCCESS
                                                             : CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

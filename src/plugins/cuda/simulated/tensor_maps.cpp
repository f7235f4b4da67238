// Tensor maps on the simulated device (the descriptors of Hopper's tensor memory accelerator that
// cuBLAS, CUTLASS and Triton kernels take as parameters). The driver's encoding is its own; the
// simulated one writes what it was given, so that a test can see what reached the backend:
// opaque[0] the global address, opaque[1] the kind (1 tiled, 2 im2col, 3 im2col wide), data type
// and rank in its low three bytes, opaque[2 ...] the global dimensions. The rules checked are the
// documented ones a program can break from its host code: rank, alignment, dimensions, strides,
// box and element strides, and that the address is device memory of the device.
#include <cstring>

#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

enum class Kind : uint64_t { kTiled = 1, kIm2col = 2, kIm2colWide = 3 };

bool aligned(const void* address, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(address) % alignment == 0;
}

// What every encoding checks: the address, the dimensions and strides (globalStrides[i] is the
// stride of dimension i + 1 in bytes), the element strides.
CUresult check_tensor(sim::State& s, CUtensorMapDataType type, cuuint32_t rank, void* address,
                      const cuuint64_t* dims, const cuuint64_t* strides,
                      const cuuint32_t* element_strides, CUtensorMapInterleave interleave) {
  if (type < CU_TENSOR_MAP_DATA_TYPE_UINT8 || type > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (rank == 0 || rank > 5 || dims == nullptr || element_strides == nullptr ||
      (rank > 1 && strides == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const uintptr_t alignment = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  if (address == nullptr || !aligned(address, alignment) ||
      sim::device_range(s, reinterpret_cast<CUdeviceptr>(address), 1) == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (uint64_t{1} << 32)) return CUDA_ERROR_INVALID_VALUE;
    if (element_strides[i] == 0 || element_strides[i] > 8) return CUDA_ERROR_INVALID_VALUE;
    if (i + 1 < rank && (strides[i] % alignment != 0 || strides[i] >= (uint64_t{1} << 40))) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

// An im2col map's shape: channels, pixels and at least one spatial dimension between them.
bool valid_im2col(cuuint32_t rank, cuuint32_t channels_per_pixel, cuuint32_t pixels_per_column) {
  return rank >= 3 && channels_per_pixel != 0 && channels_per_pixel <= 256 &&
         pixels_per_column != 0 && pixels_per_column <= 1024;
}

void write_map(CUtensorMap* map, Kind kind, CUtensorMapDataType type, cuuint32_t rank,
               void* address, const cuuint64_t* dims) {
  *map = CUtensorMap{};
  map->opaque[0] = reinterpret_cast<uintptr_t>(address);
  map->opaque[1] = static_cast<uint64_t>(kind) | static_cast<uint64_t>(type) << 8 |
                   static_cast<uint64_t>(rank) << 16;
  std::memcpy(&map->opaque[2], dims, rank * sizeof *dims);
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuTensorMapEncodeTiled(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
    void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
    const cuuint32_t* boxDim, const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  return sim::guarded([&](sim::State& s) {
    (void)swizzle, (void)l2Promotion, (void)oobFill;  // how the hardware reads: nothing here
    if (tensorMap == nullptr || boxDim == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = check_tensor(s, tensorDataType, tensorRank, globalAddress, globalDim,
                                        globalStrides, elementStrides, interleave);
        r != CUDA_SUCCESS) {
      return r;
    }
    for (cuuint32_t i = 0; i < tensorRank; ++i) {
      if (boxDim[i] == 0 || boxDim[i] > 256) return CUDA_ERROR_INVALID_VALUE;
    }
    write_map(tensorMap, Kind::kTiled, tensorDataType, tensorRank, globalAddress, globalDim);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuTensorMapEncodeIm2col(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
    void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
    const int* pixelBoxLowerCorner, const int* pixelBoxUpperCorner, cuuint32_t channelsPerPixel,
    cuuint32_t pixelsPerColumn, const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  return sim::guarded([&](sim::State& s) {
    (void)swizzle, (void)l2Promotion, (void)oobFill;
    if (tensorMap == nullptr || pixelBoxLowerCorner == nullptr || pixelBoxUpperCorner == nullptr ||
        !valid_im2col(tensorRank, channelsPerPixel, pixelsPerColumn)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = check_tensor(s, tensorDataType, tensorRank, globalAddress, globalDim,
                                        globalStrides, elementStrides, interleave);
        r != CUDA_SUCCESS) {
      return r;
    }
    write_map(tensorMap, Kind::kIm2col, tensorDataType, tensorRank, globalAddress, globalDim);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuTensorMapEncodeIm2colWide(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
    void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
    int pixelBoxLowerCornerWidth, int pixelBoxUpperCornerWidth, cuuint32_t channelsPerPixel,
    cuuint32_t pixelsPerColumn, const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  return sim::guarded([&](sim::State& s) {
    (void)pixelBoxLowerCornerWidth, (void)pixelBoxUpperCornerWidth;
    (void)swizzle, (void)l2Promotion, (void)oobFill;
    if (tensorMap == nullptr || !valid_im2col(tensorRank, channelsPerPixel, pixelsPerColumn)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W && mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = check_tensor(s, tensorDataType, tensorRank, globalAddress, globalDim,
                                        globalStrides, elementStrides, interleave);
        r != CUDA_SUCCESS) {
      return r;
    }
    write_map(tensorMap, Kind::kIm2colWide, tensorDataType, tensorRank, globalAddress, globalDim);
    return CUDA_SUCCESS;
  });
}

// The map's address replaced, the rest kept: only in a map this device encoded.
GVIRTUS_SIMULATED_EXPORT CUresult cuTensorMapReplaceAddress(CUtensorMap* tensorMap,
                                                            void* globalAddress) {
  return sim::guarded([&](sim::State& s) {
    if (tensorMap == nullptr || globalAddress == nullptr || !aligned(globalAddress, 16) ||
        sim::device_range(s, reinterpret_cast<CUdeviceptr>(globalAddress), 1) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const uint64_t kind = tensorMap->opaque[1] & 0xff;
    if (kind < static_cast<uint64_t>(Kind::kTiled) ||
        kind > static_cast<uint64_t>(Kind::kIm2colWide)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    tensorMap->opaque[0] = reinterpret_cast<uintptr_t>(globalAddress);
    return CUDA_SUCCESS;
  });
}

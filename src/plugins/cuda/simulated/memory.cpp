// Device memory of the simulated device: host allocations (256-byte aligned, as the driver's
// are), counted against the device's claimed size. Every device range a call names must lie in
// one live allocation; nothing outside one is ever read or written.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "common/log.h"
#include "plugins/cuda/common/copy_boxes.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

constexpr size_t kAlignment = 256;

std::byte* range(sim::State& s, CUdeviceptr address, uint64_t bytes) {
  return sim::device_range(s, address, bytes);
}

CUresult copy(sim::State& s, CUstream stream, std::byte* to, const std::byte* from, size_t bytes) {
  if (!sim::known_stream(s, stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (const CUresult r = sim::not_captured(s, stream); r != CUDA_SUCCESS) return r;
  if (to == nullptr || from == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::memmove(to, from, bytes);
  return CUDA_SUCCESS;
}

// A 2D fill: `height` rows of `width` elements, `pitch` bytes apart.
template <typename T>
CUresult fill_2d(sim::State& s, CUstream stream, CUdeviceptr dst, size_t pitch, T value,
                 size_t width, size_t height);

// `captured`: a linear memset a capturing stream takes as a memset node (fill_2d's rows refuse).
template <typename T>
CUresult fill(sim::State& s, CUstream stream, CUdeviceptr dst, T value, size_t count,
              bool captured = false) {
  if (!sim::known_stream(s, stream)) return CUDA_ERROR_INVALID_HANDLE;
  const auto capture = captured ? s.capturing.find(stream) : s.capturing.end();
  if (capture == s.capturing.end()) {
    if (const CUresult r = sim::not_captured(s, stream); r != CUDA_SUCCESS) return r;
  }
  if (count > UINT64_MAX / sizeof(T)) return CUDA_ERROR_INVALID_VALUE;
  std::byte* to = range(s, dst, count * sizeof(T));
  if (to == nullptr || (sizeof(T) > 1 && dst % sizeof(T) != 0)) return CUDA_ERROR_INVALID_VALUE;
  if (capture != s.capturing.end()) {
    return sim::capture_memset(s, capture->second, dst, static_cast<unsigned>(value), sizeof(T),
                               count);
  }
  for (size_t i = 0; i < count; ++i) std::memcpy(to + i * sizeof(T), &value, sizeof(T));
  return CUDA_SUCCESS;
}

template <typename T>
CUresult fill_2d(sim::State& s, CUstream stream, CUdeviceptr dst, size_t pitch, T value,
                 size_t width, size_t height) {
  if (height == 0 || width == 0) return CUDA_SUCCESS;
  if (pitch < width * sizeof(T) || width > SIZE_MAX / sizeof(T)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t row = 0; row < height; ++row) {
    if (const CUresult r = fill(s, stream, dst + row * pitch, value, width); r != CUDA_SUCCESS) {
      return r;
    }
  }
  return CUDA_SUCCESS;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch,
                                                     size_t WidthInBytes, size_t Height,
                                                     unsigned int ElementSizeBytes) {
  if (pPitch == nullptr || WidthInBytes == 0 || Height == 0) return CUDA_ERROR_INVALID_VALUE;
  if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const size_t pitch = (WidthInBytes + 511) / 512 * 512;  // rows 512-byte aligned
  if (Height > sim::kDeviceBytes / pitch) return CUDA_ERROR_OUT_OF_MEMORY;
  const CUresult result = cuMemAlloc_v2(dptr, pitch * Height);
  if (result == CUDA_SUCCESS) *pPitch = pitch;
  return result;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us,
                                                 size_t N) {
  return sim::guarded([&](sim::State& s) { return fill(s, nullptr, dstDevice, us, N); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us,
                                                   size_t N, CUstream hStream) {
  return sim::guarded([&](sim::State& s) { return fill(s, hStream, dstDevice, us, N, true); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch,
                                                  unsigned char uc, size_t Width, size_t Height) {
  return sim::guarded(
      [&](sim::State& s) { return fill_2d(s, nullptr, dstDevice, dstPitch, uc, Width, Height); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch,
                                                   unsigned short us, size_t Width, size_t Height) {
  return sim::guarded(
      [&](sim::State& s) { return fill_2d(s, nullptr, dstDevice, dstPitch, us, Width, Height); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch,
                                                     unsigned short us, size_t Width, size_t Height,
                                                     CUstream hStream) {
  return sim::guarded(
      [&](sim::State& s) { return fill_2d(s, hStream, dstDevice, dstPitch, us, Width, Height); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch,
                                                   unsigned int ui, size_t Width, size_t Height) {
  return sim::guarded(
      [&](sim::State& s) { return fill_2d(s, nullptr, dstDevice, dstPitch, ui, Width, Height); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch,
                                                    unsigned char uc, size_t Width, size_t Height,
                                                    CUstream hStream) {
  return sim::guarded(
      [&](sim::State& s) { return fill_2d(s, hStream, dstDevice, dstPitch, uc, Width, Height); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch,
                                                     unsigned int ui, size_t Width, size_t Height,
                                                     CUstream hStream) {
  return sim::guarded(
      [&](sim::State& s) { return fill_2d(s, hStream, dstDevice, dstPitch, ui, Width, Height); });
}

CUresult sim::allocate_memory(State& s, size_t bytes, CUdeviceptr* out) {
  if (bytes > sim::kDeviceBytes - s.allocated) return CUDA_ERROR_OUT_OF_MEMORY;
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  sim::HostBuffer memory(sim::allocate_device_memory(rounded, kAlignment));
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto address = reinterpret_cast<uintptr_t>(memory.get());
  s.allocations.emplace(address, std::move(memory));
  s.allocation_bytes.emplace(address, bytes);
  s.allocated += bytes;
  sim::own(s, sim::memory_key(address));
  *out = address;
  sim::notify_if_over_budget(s.allocated);
  return CUDA_SUCCESS;
}

CUresult sim::free_memory(State& s, CUdeviceptr address) {
  const auto it = s.allocation_bytes.find(address);
  if (it == s.allocation_bytes.end() || s.module_memory.count(address) != 0 ||
      s.ipc_opened.count(address) != 0) {
    return CUDA_ERROR_INVALID_VALUE;  // not an allocation (a module's variable is none, nor is
                                      // another process's memory opened by IPC)
  }
  s.allocated -= it->second;
  s.allocation_bytes.erase(it);
  s.allocations.erase(address);
  // A graph's allocation freed here is no longer the graph's to free when it is destroyed.
  s.graph_allocations.erase(address);
  sim::disown(s, sim::memory_key(address));
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return sim::guarded([&](sim::State& s) {
    if (const CUresult r = sim::needs_context(); r != CUDA_SUCCESS) return r;
    if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    return sim::allocate_memory(s, bytesize, dptr);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return sim::guarded([&](sim::State& s) {
    if (dptr == 0) return CUDA_SUCCESS;
    // A module's managed variables' region is no allocation either.
    if (s.module_memory.count(dptr) == 0 && sim::free_managed(s, dptr)) return CUDA_SUCCESS;
    return sim::free_memory(s, dptr);
  });
}

// Stream-ordered allocation: the stream's earlier work is done (streams complete at once), so the
// memory is allocated and freed at once, from the device's pool.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize,
                                                  CUstream hStream) {
  {
    const CUresult known = sim::guarded([&](sim::State& s) {
      return sim::known_stream(s, hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    });
    if (known != CUDA_SUCCESS) return known;
  }
  return cuMemAlloc_v2(dptr, bytesize);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize,
                                                          CUmemoryPool pool, CUstream hStream) {
  const CUresult known = sim::guarded([&](sim::State& s) {
    return sim::known_pool(s, pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
  if (known != CUDA_SUCCESS) return known;
  return cuMemAllocAsync(dptr, bytesize, hStream);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  {
    const CUresult known = sim::guarded([&](sim::State& s) {
      return sim::known_stream(s, hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    });
    if (known != CUDA_SUCCESS) return known;
  }
  return cuMemFree_v2(dptr);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  return sim::guarded([&](sim::State& s) {
    if (const CUresult r = sim::needs_context(); r != CUDA_SUCCESS) return r;
    if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *total = sim::kDeviceBytes;
    *free = sim::kDeviceBytes - s.allocated;
    return CUDA_SUCCESS;
  });
}

namespace {

// The allocation holding `dptr`: its start and size.
CUresult address_range(const sim::State& s, CUdeviceptr dptr, CUdeviceptr* base, size_t* size) {
  auto it = s.allocation_bytes.upper_bound(dptr);
  if (it == s.allocation_bytes.begin()) return CUDA_ERROR_NOT_FOUND;
  --it;
  if (dptr - it->first >= it->second) return CUDA_ERROR_NOT_FOUND;
  if (base != nullptr) *base = it->first;
  if (size != nullptr) *size = it->second;
  return CUDA_SUCCESS;
}

}  // namespace

// In the current context, as a driver answers it (CUDA_ERROR_INVALID_CONTEXT with none).
GVIRTUS_SIMULATED_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize,
                                                          CUdeviceptr dptr) {
  return sim::guarded([&](sim::State& s) {
    if (const CUresult r = sim::needs_context(); r != CUDA_SUCCESS) return r;
    return address_range(s, dptr, pbase, psize);
  });
}

// An allocation's extent, which a driver gives without a current context (unified addressing);
// the backend asks it of a pointer imported into a pool. Other attributes: not simulated.
GVIRTUS_SIMULATED_EXPORT CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute,
                                                        CUdeviceptr ptr) {
  return sim::guarded([&](sim::State& s) {
    if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr base = 0;
    size_t size = 0;
    if (const CUresult r = address_range(s, ptr, &base, &size); r != CUDA_SUCCESS) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    switch (attribute) {
      case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *static_cast<CUdeviceptr*>(data) = base;
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *static_cast<size_t*>(data) = size;
        return CUDA_SUCCESS;
      default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost,
                                                  size_t ByteCount) {
  return sim::guarded([&](sim::State& s) {
    return copy(s, nullptr, range(s, dstDevice, ByteCount), static_cast<const std::byte*>(srcHost),
                ByteCount);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void* srcHost,
                                                       size_t ByteCount, CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    return copy(s, hStream, range(s, dstDevice, ByteCount), static_cast<const std::byte*>(srcHost),
                ByteCount);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice,
                                                  size_t ByteCount) {
  return sim::guarded([&](sim::State& s) {
    return copy(s, nullptr, static_cast<std::byte*>(dstHost), range(s, srcDevice, ByteCount),
                ByteCount);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dstHost, CUdeviceptr srcDevice,
                                                       size_t ByteCount, CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    return copy(s, hStream, static_cast<std::byte*>(dstHost), range(s, srcDevice, ByteCount),
                ByteCount);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                  size_t ByteCount) {
  return sim::guarded([&](sim::State& s) {
    return copy(s, nullptr, range(s, dstDevice, ByteCount), range(s, srcDevice, ByteCount),
                ByteCount);
  });
}

// A capturing stream takes it as a copy node.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                       size_t ByteCount, CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    std::byte* to = range(s, dstDevice, ByteCount);
    const std::byte* from = range(s, srcDevice, ByteCount);
    if (const auto capture = s.capturing.find(hStream); capture != s.capturing.end()) {
      if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
      if (to == nullptr || from == nullptr) return CUDA_ERROR_INVALID_VALUE;
      return sim::capture_copy(s, capture->second, dstDevice, srcDevice, ByteCount);
    }
    return copy(s, hStream, to, from, ByteCount);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return sim::guarded([&](sim::State& s) { return fill(s, nullptr, dstDevice, uc, N); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return sim::guarded([&](sim::State& s) { return fill(s, nullptr, dstDevice, ui, N); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                                  CUstream hStream) {
  return sim::guarded([&](sim::State& s) { return fill(s, hStream, dstDevice, uc, N, true); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                                   CUstream hStream) {
  return sim::guarded([&](sim::State& s) { return fill(s, hStream, dstDevice, ui, N, true); });
}

namespace {

// CUDA_SUCCESS when both contexts are live, else CUDA_ERROR_INVALID_CONTEXT.
CUresult check_contexts(CUcontext dst, CUcontext src) {
  return sim::guarded([&](sim::State& s) {
    return sim::known_context(s, dst) && sim::known_context(s, src) ? CUDA_SUCCESS
                                                                    : CUDA_ERROR_INVALID_CONTEXT;
  });
}

}  // namespace

// The devices share one memory: a peer copy, between any two contexts, is a copy within it.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext,
                                               CUdeviceptr srcDevice, CUcontext srcContext,
                                               size_t ByteCount) {
  if (const CUresult r = check_contexts(dstContext, srcContext); r != CUDA_SUCCESS) return r;
  return cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
                                                    CUdeviceptr srcDevice, CUcontext srcContext,
                                                    size_t ByteCount, CUstream hStream) {
  if (const CUresult r = check_contexts(dstContext, srcContext); r != CUDA_SUCCESS) return r;
  return cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, hStream);
}

namespace {

// One side of a 2D copy on the simulated device: device memory must lie in one allocation
// (pitch x (height - 1) + width bytes of it); host memory is the caller's.
CUresult side_2d(sim::State& s, CUmemorytype type, const void* host, CUdeviceptr device,
                 uint64_t offset, size_t pitch, size_t width, size_t height, std::byte*& at) {
  if (height > 1 && pitch < width) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t span = uint64_t{pitch} * (height - 1) + width;
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      if (host == nullptr) return CUDA_ERROR_INVALID_VALUE;
      at = static_cast<std::byte*>(const_cast<void*>(host)) + offset;
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
      at = range(s, device + offset, span);
      return at != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // arrays: copy_2d copies them as boxes
  }
}

CUresult copy_2d(const CUDA_MEMCPY2D* copy, CUstream stream) {
  if (copy == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (copy->srcMemoryType == CU_MEMORYTYPE_ARRAY || copy->dstMemoryType == CU_MEMORYTYPE_ARRAY) {
    const CUDA_MEMCPY3D box = gvirtus::cuda::as_box(*copy);  // arrays.cpp copies boxes
    return cuMemcpy3DAsync_v2(&box, stream);
  }
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_stream(s, stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (const CUresult r = sim::not_captured(s, stream); r != CUDA_SUCCESS) return r;
    const size_t width = copy->WidthInBytes, height = copy->Height;
    if (width == 0 || height == 0) return CUDA_SUCCESS;
    std::byte* from = nullptr;
    std::byte* to = nullptr;
    const uint64_t src_offset = uint64_t{copy->srcY} * copy->srcPitch + copy->srcXInBytes;
    const uint64_t dst_offset = uint64_t{copy->dstY} * copy->dstPitch + copy->dstXInBytes;
    if (const CUresult r = side_2d(s, copy->srcMemoryType, copy->srcHost, copy->srcDevice,
                                   src_offset, copy->srcPitch, width, height, from);
        r != CUDA_SUCCESS) {
      return r;
    }
    if (const CUresult r = side_2d(s, copy->dstMemoryType, copy->dstHost, copy->dstDevice,
                                   dst_offset, copy->dstPitch, width, height, to);
        r != CUDA_SUCCESS) {
      return r;
    }
    for (size_t row = 0; row < height; ++row) {
      std::memmove(to + row * copy->dstPitch, from + row * copy->srcPitch, width);
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, nullptr);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, nullptr);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return copy_2d(pCopy, hStream);
}

namespace {

// A stream memory operation's device word, checked as a copy's range is.
template <typename T>
CUresult stream_word(sim::State& s, CUstream stream, CUdeviceptr address, std::byte*& at) {
  if (!sim::known_stream(s, stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (const CUresult r = sim::not_captured(s, stream); r != CUDA_SUCCESS) return r;
  if (address % sizeof(T) != 0) return CUDA_ERROR_INVALID_VALUE;
  at = range(s, address, sizeof(T));
  return at != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

template <typename T>
CUresult write_value(sim::State& s, CUstream stream, CUdeviceptr address, T value, unsigned flags) {
  if ((flags & ~unsigned{CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER}) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::byte* at = nullptr;
  if (const CUresult r = stream_word<T>(s, stream, address, at); r != CUDA_SUCCESS) return r;
  std::memcpy(at, &value, sizeof value);
  return CUDA_SUCCESS;
}

// A wait: streams complete at once here, so the condition is judged now. One that does not hold
// would keep a GPU's stream waiting for another stream's write; the simulated device cannot wait,
// and says so in its log.
template <typename T>
CUresult wait_value(sim::State& s, CUstream stream, CUdeviceptr address, T value, unsigned flags) {
  std::byte* at = nullptr;
  if (const CUresult r = stream_word<T>(s, stream, address, at); r != CUDA_SUCCESS) return r;
  T now{};
  std::memcpy(&now, at, sizeof now);
  bool holds = false;
  switch (flags & 0xf) {
    case CU_STREAM_WAIT_VALUE_GEQ:
      holds = static_cast<std::make_signed_t<T>>(now - value) >= 0;
      break;
    case CU_STREAM_WAIT_VALUE_EQ:
      holds = now == value;
      break;
    case CU_STREAM_WAIT_VALUE_AND:
      holds = (now & value) != 0;
      break;
    case CU_STREAM_WAIT_VALUE_NOR:
      holds = ~(now | value) != 0;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (!holds) {
    GVIRTUS_LOG(kNotice) << "simulated device: a stream waits on a value that is not there yet "
                            "(a GPU's stream would wait; the simulated one goes on)";
  }
  return CUDA_SUCCESS;
}

}  // namespace

// One operation of a batch (a stream's or a batch memory operation node's): its wait or write as
// the single calls make it; a flush of remote writes and a memory barrier order nothing more on
// a device whose work is done when it is asked for.
CUresult sim::mem_op(State& s, CUstream stream, const CUstreamBatchMemOpParams& p) {
  uint32_t operation = 0;  // read as the integer it is: it may be none of the enum's values
  std::memcpy(&operation, &p, sizeof operation);
  switch (operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      return wait_value<uint32_t>(s, stream, p.waitValue.address, p.waitValue.value,
                                  p.waitValue.flags);
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      return wait_value<uint64_t>(s, stream, p.waitValue.address, p.waitValue.value64,
                                  p.waitValue.flags);
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      return write_value<uint32_t>(s, stream, p.writeValue.address, p.writeValue.value,
                                   p.writeValue.flags);
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      return write_value<uint64_t>(s, stream, p.writeValue.address, p.writeValue.value64,
                                   p.writeValue.flags);
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      return p.flushRemoteWrites.flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_STREAM_MEM_OP_BARRIER:
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr,
                                                          cuuint32_t value, unsigned int flags) {
  return sim::guarded(
      [&](sim::State& s) { return write_value<uint32_t>(s, stream, addr, value, flags); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr,
                                                          cuuint64_t value, unsigned int flags) {
  return sim::guarded(
      [&](sim::State& s) { return write_value<uint64_t>(s, stream, addr, value, flags); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr,
                                                         cuuint32_t value, unsigned int flags) {
  return sim::guarded(
      [&](sim::State& s) { return wait_value<uint32_t>(s, stream, addr, value, flags); });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr,
                                                         cuuint64_t value, unsigned int flags) {
  return sim::guarded(
      [&](sim::State& s) { return wait_value<uint64_t>(s, stream, addr, value, flags); });
}

// A batch of stream memory operations: its operations in order (sim::mem_op).
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count,
                                                        CUstreamBatchMemOpParams* paramArray,
                                                        unsigned int flags) {
  if (flags != 0 || (count > 0 && paramArray == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  return sim::guarded([&](sim::State& s) {
    for (unsigned i = 0; i < count; ++i) {
      if (const CUresult r = sim::mem_op(s, stream, paramArray[i]); r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
  });
}

// The device pool's attributes: the reuse flags and the release threshold as set; the memory
// figures from the device's allocations (freed memory goes back at once: reserved is used).
GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                        void* value) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_pool(s, pool) || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
      case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: {
        int flag = 0;
        std::memcpy(&flag, value, sizeof flag);
        s.pool_attributes[pool][attr] = flag != 0;
        return CUDA_SUCCESS;
      }
      case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        std::memcpy(&s.pool_attributes[pool][attr], value, sizeof(uint64_t));
        return CUDA_SUCCESS;
      case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      case CU_MEMPOOL_ATTR_USED_MEM_HIGH: {
        uint64_t reset = 1;
        std::memcpy(&reset, value, sizeof reset);
        return reset == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;  // only a reset to 0
      }
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                        void* value) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_pool(s, pool) || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
      case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: {
        const auto& attributes = s.pool_attributes[pool];
        const auto it = attributes.find(attr);
        const int flag = it != attributes.end() ? static_cast<int>(it->second) : 1;
        std::memcpy(value, &flag, sizeof flag);
        return CUDA_SUCCESS;
      }
      case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: {
        const uint64_t threshold = s.pool_attributes[pool][attr];
        std::memcpy(value, &threshold, sizeof threshold);
        return CUDA_SUCCESS;
      }
      case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
      case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      case CU_MEMPOOL_ATTR_USED_MEM_HIGH: {
        const uint64_t bytes = s.allocated;
        std::memcpy(value, &bytes, sizeof bytes);
        return CUDA_SUCCESS;
      }
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
  });
}

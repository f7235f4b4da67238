// Managed memory on the simulated device (cuMemAllocManaged): page-aligned memory mappings of
// their own, placed from a high range of the address space that a client process does not use
// (it mirrors each region at the same address: frontend/managed_memory.h), device memory at their
// address as registered host memory is (state.h's managed). cuMemFree gives them back.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

// Where the next region goes: far from the heap and from the C library's mappings, in both this
// process and a client's (a GPU driver places managed memory in a range of its own too).
constexpr uintptr_t kManagedBase = uintptr_t{0x5e} << 40;
uintptr_t next_managed = kManagedBase;

size_t page_bytes() {
  return static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// Maps a managed region of `bytes` at the next free place of the managed range, registered as
// managed memory: its address, 0 when none could be had.
uintptr_t map_managed(sim::State& s, size_t bytes, unsigned flags) {
  const size_t mapped = (bytes + page_bytes() - 1) / page_bytes() * page_bytes();
  // A range taken already (by a region freed since, or by something else) is skipped.
  for (int attempt = 0; attempt < 64; ++attempt) {
    void* at = ::mmap(reinterpret_cast<void*>(next_managed), mapped, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    const uintptr_t tried = next_managed;
    next_managed += mapped + (uintptr_t{2} << 20);  // a gap, as a driver leaves
    if (at == MAP_FAILED) continue;
    if (reinterpret_cast<uintptr_t>(at) != tried) {  // a kernel without MAP_FIXED_NOREPLACE
      ::munmap(at, mapped);
      continue;
    }
    s.managed.add(at, bytes, flags);
    s.allocated += bytes;
    return tried;
  }
  return 0;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize,
                                                    unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (bytesize > sim::kDeviceBytes - s.allocated) return CUDA_ERROR_OUT_OF_MEMORY;
    const uintptr_t at = map_managed(s, bytesize, flags);
    if (at == 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = at;
    return CUDA_SUCCESS;
  });
}

namespace gvirtus::simulated {

uintptr_t place_managed_variable(State& s, Module& module, uint64_t bytes) {
  constexpr size_t kRegionBytes = size_t{64} << 10;
  constexpr size_t kAlign = 16;
  const size_t size = std::max<size_t>(bytes, 1);
  size_t offset = (module.managed_used + kAlign - 1) / kAlign * kAlign;
  const auto last =
      module.managed_regions.empty()
          ? std::nullopt
          : s.managed.find(reinterpret_cast<const void*>(module.managed_regions.back()));
  if (!last || offset > last->bytes || size > last->bytes - offset) {
    if (size > kDeviceBytes - s.allocated) return 0;
    const uintptr_t region = map_managed(s, std::max(kRegionBytes, size), CU_MEM_ATTACH_GLOBAL);
    if (region == 0) return 0;
    module.managed_regions.push_back(region);
    s.module_memory.insert(region);  // not the program's to free
    offset = 0;
  }
  module.managed_used = offset + size;
  return module.managed_regions.back() + offset;
}

bool free_managed(State& s, CUdeviceptr address) {
  const auto range = s.managed.take(reinterpret_cast<const void*>(address));
  if (!range) return false;
  ::munmap(reinterpret_cast<void*>(range->start),
           (range->bytes + page_bytes() - 1) / page_bytes() * page_bytes());
  s.allocated -= range->bytes;
  s.managed_hints.erase(range->start);
  return true;
}

}  // namespace gvirtus::simulated

// Hints over managed (or device) memory: nothing to move on the simulated device, whose memory is
// one; the range and the stream are checked as the driver checks them.
namespace {

// A location as the legacy attributes name it: a device, or CU_DEVICE_CPU for the host.
int device_of(const CUmemLocation& location) {
  return location.type == CU_MEM_LOCATION_TYPE_DEVICE ? location.id : CU_DEVICE_CPU;
}

// The hints of the managed region holding `address` (null for other memory).
sim::State::ManagedHints* hints_of(sim::State& s, CUdeviceptr address) {
  const auto range = s.managed.find(reinterpret_cast<const void*>(address));
  return range ? &s.managed_hints[range->start] : nullptr;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
                                                        CUmemLocation location, unsigned int flags,
                                                        CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    if (flags != 0 || sim::device_range(s, devPtr, count) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    if (auto* hints = hints_of(s, devPtr)) hints->last_prefetch = device_of(location);
    return CUDA_SUCCESS;
  });
}

namespace {

// A batch of prefetches or discards checked as the driver documents it: flags zero, a stream
// other than the legacy one, every range inside one managed region; for prefetches, locations
// whose first indexes start at 0, rise strictly and stay below the count. A discard leaves its
// ranges indeterminate: the simulated device fills them with 0xdd, so that a host that read the
// old bytes afterwards would show it; a prefetch records its location, as cuMemPrefetchAsync.
CUresult managed_batch(CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* locations,
                       size_t* firsts, size_t location_count, unsigned long long flags,
                       CUstream stream, bool discard, bool prefetch) {
  return sim::guarded([&](sim::State& s) {
    if (flags != 0 || stream == nullptr || count == 0 || dptrs == nullptr || sizes == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!sim::known_stream(s, stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (prefetch) {
      if (location_count == 0 || location_count > count || locations == nullptr ||
          firsts == nullptr || firsts[0] != 0) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      for (size_t i = 1; i < location_count; ++i) {
        if (firsts[i] < firsts[i - 1] || firsts[i] >= count) return CUDA_ERROR_INVALID_VALUE;
      }
    }
    for (size_t i = 0; i < count; ++i) {
      if (sizes[i] == 0 || sim::device_range(s, dptrs[i], sizes[i]) == nullptr ||
          hints_of(s, dptrs[i]) == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    size_t location = 0;
    for (size_t i = 0; i < count; ++i) {
      if (discard) std::memset(reinterpret_cast<void*>(dptrs[i]), 0xdd, sizes[i]);
      if (!prefetch) continue;
      while (location + 1 < location_count && firsts[location + 1] <= i) ++location;
      hints_of(s, dptrs[i])->last_prefetch = device_of(locations[location]);
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPrefetchBatchAsync(
    CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* prefetchLocs,
    size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream) {
  return managed_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
                       hStream, false, true);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemDiscardBatchAsync(CUdeviceptr* dptrs, size_t* sizes,
                                                         size_t count, unsigned long long flags,
                                                         CUstream hStream) {
  return managed_batch(dptrs, sizes, count, nullptr, nullptr, 0, flags, hStream, true, false);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemDiscardAndPrefetchBatchAsync(
    CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* prefetchLocs,
    size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream) {
  return managed_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
                       hStream, true, true);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count,
                                                 CUmem_advise advice, CUmemLocation location) {
  return sim::guarded([&](sim::State& s) {
    if (sim::device_range(s, devPtr, count) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto* hints = hints_of(s, devPtr);
    if (hints == nullptr) return CUDA_SUCCESS;  // device memory: nothing to remember
    switch (advice) {
      case CU_MEM_ADVISE_SET_READ_MOSTLY:
        hints->read_mostly = true;
        break;
      case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
        hints->read_mostly = false;
        break;
      case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
        hints->preferred = device_of(location);
        break;
      case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
        hints->preferred = CU_DEVICE_INVALID;
        break;
      default:
        break;  // accessed-by: not reported by the simulated device
    }
    return CUDA_SUCCESS;
  });
}

// The hints of a managed range, as the driver reports them (a range within one region): read
// mostly, the preferred location and the last prefetch's, each an int. The other attributes
// (accessed-by, the location types and ids of CUDA 12.2) the simulated device does not report.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemRangeGetAttribute(void* data, size_t dataSize,
                                                         CUmem_range_attribute attribute,
                                                         CUdeviceptr devPtr, size_t count) {
  return sim::guarded([&](sim::State& s) {
    const auto range = s.managed.find(reinterpret_cast<const void*>(devPtr));
    if (data == nullptr || count == 0 || !range || devPtr + count > range->start + range->bytes) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const sim::State::ManagedHints& hints = s.managed_hints[range->start];
    int value = 0;
    switch (attribute) {
      case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
        value = hints.read_mostly ? 1 : 0;
        break;
      case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
        value = hints.preferred;
        break;
      case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
        value = hints.last_prefetch;
        break;
      default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (dataSize != sizeof value) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(data, &value, sizeof value);
    return CUDA_SUCCESS;
  });
}

// A stream's attachment: nothing to place on the simulated device; the memory (a managed region,
// whole when length is 0) and the stream are checked as the driver checks them.
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr,
                                                         size_t length, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST &&
        flags != CU_MEM_ATTACH_SINGLE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const auto range = s.managed.find(reinterpret_cast<const void*>(dptr));
    if (!range || (length != 0 && sim::device_range(s, dptr, length) == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return sim::known_stream(s, hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

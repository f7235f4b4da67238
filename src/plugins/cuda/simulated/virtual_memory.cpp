// Virtual memory management on the simulated device (state.h's Physical and Mapping): physical
// allocations are memory files, reservations inaccessible address space of this process, and a
// mapping maps a file's pages there, shared, at the very address the client was given - so the
// device's memory stays host memory at its own addresses, as everywhere on the simulated device.
// Granularity is 2 MiB. Mapped memory is device memory to every other call once cuMemSetAccess
// gave the device access, as on a GPU.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "state.h"

namespace sim = gvirtus::simulated;

namespace gvirtus::simulated {
Physical::~Physical() {
  if (fd >= 0) ::close(fd);
}
}  // namespace gvirtus::simulated

namespace {

constexpr uint64_t kGranularity = uint64_t{2} << 20;

bool granular(uint64_t value) {
  return value % kGranularity == 0;
}

// A visible device (they share one memory: any of them is where physical memory lives).
bool device_location(const sim::State& s, const CUmemLocation& location) {
  return location.type == CU_MEM_LOCATION_TYPE_DEVICE && sim::valid_device(s, location.id);
}

// The reservation holding all of [start, start + bytes), or end().
std::map<uintptr_t, uint64_t>::iterator reservation_of(sim::State& s, uint64_t start,
                                                       uint64_t bytes) {
  auto it = s.reservations.upper_bound(start);
  if (it == s.reservations.begin()) return s.reservations.end();
  --it;
  if (start - it->first >= it->second || bytes > it->second - (start - it->first)) {
    return s.reservations.end();
  }
  return it;
}

bool any_mapping_in(sim::State& s, uint64_t start, uint64_t bytes) {
  auto it = s.mappings.upper_bound(start);
  if (it != s.mappings.begin() && std::prev(it)->first + std::prev(it)->second.bytes > start) {
    return true;
  }
  return it != s.mappings.end() && it->first < start + bytes;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuMemGetAllocationGranularity(
    size_t* granularity, const CUmemAllocationProp* prop, CUmemAllocationGranularity_flags option) {
  return sim::guarded([&](sim::State& s) {
    if (granularity == nullptr || prop == nullptr || !device_location(s, prop->location) ||
        (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
         option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *granularity = kGranularity;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size,
                                                      size_t alignment, CUdeviceptr addr,
                                                      unsigned long long flags) {
  return sim::guarded([&](sim::State& s) {
    (void)addr;  // a hint the simulated device does not take
    if (ptr == nullptr || size == 0 || !granular(size) || flags != 0 ||
        (alignment != 0 && (alignment & (alignment - 1)) != 0)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const uint64_t align = alignment > kGranularity ? alignment : kGranularity;
    // Reserve extra to align, then give back what lies outside.
    void* raw = ::mmap(nullptr, size + align, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    const auto base = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t start = (base + align - 1) / align * align;
    if (start > base) ::munmap(raw, start - base);
    if (base + size + align > start + size) {
      ::munmap(reinterpret_cast<void*>(start + size), base + size + align - (start + size));
    }
    s.reservations.emplace(start, size);
    *ptr = start;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  return sim::guarded([&](sim::State& s) {
    const auto it = s.reservations.find(ptr);
    if (it == s.reservations.end() || it->second != size || any_mapping_in(s, ptr, size)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    ::munmap(reinterpret_cast<void*>(ptr), size);
    s.reservations.erase(it);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                              const CUmemAllocationProp* prop,
                                              unsigned long long flags) {
  return sim::guarded([&](sim::State& s) {
    if (handle == nullptr || prop == nullptr || size == 0 || !granular(size) || flags != 0 ||
        prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || !device_location(s, prop->location)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // A POSIX descriptor may be asked for (shareable.cpp: the memfd itself); no fabric.
    if ((prop->requestedHandleTypes & ~CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (size > sim::kDeviceBytes - s.allocated) return CUDA_ERROR_OUT_OF_MEMORY;
    const int fd = ::memfd_create("gvirtus-simulated-physical", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    auto physical = std::make_unique<sim::Physical>(fd, size);
    physical->prop = *prop;
    physical->prop.win32HandleMetaData = nullptr;
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    s.allocated += size;
    *handle = s.next_physical++;
    s.physical.emplace(*handle, std::move(physical));
    return CUDA_SUCCESS;
  });
}

// Released while mapped, the pages live on in their mappings until those go, as on the driver.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return sim::guarded([&](sim::State& s) {
    const auto it = s.physical.find(handle);
    if (it == s.physical.end() || it->second->references == 0) return CUDA_ERROR_INVALID_VALUE;
    if (--it->second->references > 0) return CUDA_SUCCESS;
    s.allocated -= it->second->bytes;
    if (it->second->mappings == 0) s.physical.erase(it);
    return CUDA_SUCCESS;
  });
}

// The allocation mapped at `addr` (any address in a mapping), one more reference to it.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle,
                                                              void* addr) {
  return sim::guarded([&](sim::State& s) {
    const auto at = reinterpret_cast<uintptr_t>(addr);
    auto mapping = s.mappings.upper_bound(at);
    if (handle == nullptr || mapping == s.mappings.begin()) return CUDA_ERROR_INVALID_VALUE;
    --mapping;
    if (at - mapping->first >= mapping->second.bytes) return CUDA_ERROR_INVALID_VALUE;
    sim::Physical& physical = *s.physical.at(mapping->second.handle);
    if (physical.references++ == 0) s.allocated += physical.bytes;  // held again
    *handle = mapping->second.handle;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                           CUmemGenericAllocationHandle handle,
                                           unsigned long long flags) {
  return sim::guarded([&](sim::State& s) {
    const auto physical = s.physical.find(handle);
    if (physical == s.physical.end() || physical->second->references == 0 || flags != 0 ||
        size == 0 || !granular(size) || !granular(offset) || !granular(ptr) ||
        offset > physical->second->bytes || size > physical->second->bytes - offset ||
        reservation_of(s, ptr, size) == s.reservations.end() || any_mapping_in(s, ptr, size)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    void* at = ::mmap(reinterpret_cast<void*>(ptr), size, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_FIXED, physical->second->fd, static_cast<off_t>(offset));
    if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    s.mappings.emplace(ptr, sim::Mapping{size, false, handle});
    ++physical->second->mappings;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  return sim::guarded([&](sim::State& s) {
    if (reservation_of(s, ptr, size) == s.reservations.end()) return CUDA_ERROR_INVALID_VALUE;
    // The range must consist of whole mappings, the first starting at ptr.
    auto it = s.mappings.find(ptr);
    if (it == s.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
    auto end = it;
    for (uint64_t at = ptr; at < ptr + size; ++end) {
      if (end == s.mappings.end() || end->first != at) return CUDA_ERROR_INVALID_VALUE;
      at += end->second.bytes;
      if (at > ptr + size) return CUDA_ERROR_INVALID_VALUE;
    }
    // Back to reserved, inaccessible address space.
    void* at = ::mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    // An allocation released while mapped goes with its last mapping.
    for (auto m = it; m != end; ++m) {
      const auto physical = s.physical.find(m->second.handle);
      if (physical != s.physical.end() && --physical->second->mappings == 0 &&
          physical->second->references == 0) {
        s.physical.erase(physical);
      }
    }
    s.mappings.erase(it, end);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
                                                 const CUmemAccessDesc* desc, size_t count) {
  return sim::guarded([&](sim::State& s) {
    if (desc == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
    bool device_access = false;
    for (size_t i = 0; i < count; ++i) {
      if (!device_location(s, desc[i].location) ||
          desc[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
        return CUDA_ERROR_INVALID_VALUE;  // no host access to device memory
      }
      device_access = desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
    // Whole mappings, one after another, from ptr.
    auto it = s.mappings.find(ptr);
    std::vector<sim::Mapping*> covered;
    for (uint64_t at = ptr; at < ptr + size; ++it) {
      if (it == s.mappings.end() || it->first != at) return CUDA_ERROR_INVALID_VALUE;
      covered.push_back(&it->second);
      at += it->second.bytes;
      if (at > ptr + size) return CUDA_ERROR_INVALID_VALUE;
    }
    for (sim::Mapping* m : covered) m->accessible = device_access;
    return CUDA_SUCCESS;
  });
}

// The access of a mapping that holds `ptr`: read and write for a device once cuMemSetAccess gave
// the devices access (the simulated devices share one memory), none before; none for the host.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemGetAccess(unsigned long long* flags,
                                                 const CUmemLocation* location, CUdeviceptr ptr) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto it = s.mappings.upper_bound(ptr);
    if (it == s.mappings.begin()) return CUDA_ERROR_INVALID_VALUE;
    --it;
    if (ptr >= it->first + it->second.bytes) return CUDA_ERROR_INVALID_VALUE;
    if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) {
      *flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
      return location->type == CU_MEM_LOCATION_TYPE_HOST ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    if (!device_location(s, *location)) return CUDA_ERROR_INVALID_DEVICE;
    *flags =
        it->second.accessible ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(
    CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  return sim::guarded([&](sim::State& s) {
    if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto it = s.physical.find(handle);
    if (it == s.physical.end() || it->second->references == 0) return CUDA_ERROR_INVALID_VALUE;
    *prop = it->second->prop;
    return CUDA_SUCCESS;
  });
}

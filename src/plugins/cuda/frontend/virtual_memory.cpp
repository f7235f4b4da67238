// Virtual memory management in the client libcuda.so.1 (wire: common/driver_wire.h). The stub
// keeps the session's reservations and mappings too (common/virtual_ranges.h), so that mapped
// memory is device memory to the rest of the stub - cuMemcpy's direction, pointer attributes -
// exactly while it is mapped: each reservation's mapped runs are its device ranges.
// Shareable handles are exported and imported by shareable_handles.cpp.
#include <cuda.h>

#include <map>
#include <mutex>
#include <vector>

#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/virtual_ranges.h"
#include "plugins/cuda/frontend/memory_ranges.h"

namespace gvirtus::cuda {
namespace {

struct Client {
  std::mutex mutex;
  VirtualRanges ranges;
  std::map<uint64_t, std::vector<VirtualRanges::Run>> published;  // reservation -> its runs
};

Client& client() {
  static auto& c = *new Client;  // never destroyed: exit handlers may still free memory
  return c;
}

// Replaces a reservation's device ranges with its current mapped runs.
void publish_runs(Client& c, uint64_t reservation) {
  for (const auto& [start, bytes] : c.published[reservation])
    device_ranges().remove(as_pointer(start));
  c.published[reservation] = c.ranges.runs(reservation);
  for (const auto& [start, bytes] : c.published[reservation]) {
    device_ranges().add(as_pointer(start), bytes, 0, 0);
  }
}

// Records a mapping the backend made (or undid) and republishes its reservation's runs.
void remember(uint64_t start, uint64_t bytes, bool mapped) {
  Client& c = client();
  std::lock_guard lock(c.mutex);
  const auto reservation = c.ranges.reservation_of(start, bytes);
  if (reservation && (mapped ? c.ranges.map(start, bytes) : c.ranges.unmap(start, bytes))) {
    publish_runs(c, *reservation);
  }
}

// One call: the request, then (for three calls) the u64 the reply brings.
CUresult call(Fn fn, const VirtualMemoryRequest& request, const void* blob, size_t blob_bytes,
              uint64_t* answer) {
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        put_record(w, request);
        if (blob != nullptr) w.put_blob(blob, blob_bytes);
      },
      [&](WireReader& r) {
        if (answer != nullptr) *answer = r.get<uint64_t>();
      });
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment,
                                            CUdeviceptr addr, unsigned long long flags) {
  if (ptr == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  uint64_t address = 0;
  const CUresult result = cr::call(cr::Fn::cuMemAddressReserve, {addr, size, alignment, 0, flags},
                                   nullptr, 0, &address);
  if (result != CUDA_SUCCESS) return result;
  std::lock_guard lock(cr::client().mutex);
  cr::client().ranges.reserve(address, size);
  *ptr = address;
  return CUDA_SUCCESS;
}

GVIRTUS_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  const CUresult result =
      cr::call(cr::Fn::cuMemAddressFree, {ptr, size, 0, 0, 0}, nullptr, 0, nullptr);
  if (result == CUDA_SUCCESS) {
    std::lock_guard lock(cr::client().mutex);
    cr::client().ranges.release(ptr, size);
    cr::client().published.erase(ptr);
  }
  return result;
}

GVIRTUS_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                    const CUmemAllocationProp* prop, unsigned long long flags) {
  if (handle == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t created = 0;
  const CUresult result =
      cr::call(cr::Fn::cuMemCreate, {0, size, 0, 0, flags}, prop, sizeof *prop, &created);
  if (result == CUDA_SUCCESS) *handle = created;
  return result;
}

GVIRTUS_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return cr::call(cr::Fn::cuMemRelease, {0, 0, 0, handle, 0}, nullptr, 0, nullptr);
}

// One more reference to the allocation mapped at `addr`, which a cuMemRelease gives back.
GVIRTUS_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle,
                                                    void* addr) {
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t retained = 0;
  const CUresult result =
      cr::call(cr::Fn::cuMemRetainAllocationHandle, {reinterpret_cast<uintptr_t>(addr), 0, 0, 0, 0},
               nullptr, 0, &retained);
  if (result == CUDA_SUCCESS) *handle = retained;
  return result;
}

GVIRTUS_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                 CUmemGenericAllocationHandle handle, unsigned long long flags) {
  const CUresult result =
      cr::call(cr::Fn::cuMemMap, {ptr, size, offset, handle, flags}, nullptr, 0, nullptr);
  if (result == CUDA_SUCCESS) cr::remember(ptr, size, true);
  return result;
}

GVIRTUS_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  const CUresult result = cr::call(cr::Fn::cuMemUnmap, {ptr, size, 0, 0, 0}, nullptr, 0, nullptr);
  if (result == CUDA_SUCCESS) cr::remember(ptr, size, false);
  return result;
}

GVIRTUS_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                                       size_t count) {
  if ((count != 0 && desc == nullptr) || count > cr::kMaxAccessDescriptors) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return cr::call(cr::Fn::cuMemSetAccess, {ptr, size, 0, 0, 0}, desc,
                  count * sizeof(CUmemAccessDesc), nullptr);
}

GVIRTUS_EXPORT CUresult cuMemGetAllocationGranularity(size_t* granularity,
                                                      const CUmemAllocationProp* prop,
                                                      CUmemAllocationGranularity_flags option) {
  if (granularity == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
      option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  uint64_t answer = 0;
  const CUresult result =
      cr::call(cr::Fn::cuMemGetAllocationGranularity, {0, 0, 0, 0, static_cast<uint64_t>(option)},
               prop, sizeof *prop, &answer);
  if (result == CUDA_SUCCESS) *granularity = answer;
  return result;
}

// The access `location` has to the mapping at `ptr` (a mapping of the session's).
GVIRTUS_EXPORT CUresult cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location,
                                       CUdeviceptr ptr) {
  if (flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t answer = 0;
  const CUresult result =
      cr::call(cr::Fn::cuMemGetAccess, {ptr, 1, 0, 0, 0}, location, sizeof *location, &answer);
  if (result == CUDA_SUCCESS) *flags = answer;
  return result;
}

// The properties a physical allocation of the session's was created with (no Windows handle
// metadata: none crosses).
GVIRTUS_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(
    CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::remote_sync(
      cr::Fn::cuMemGetAllocationPropertiesFromHandle,
      [&](gvirtus::WireWriter& w) {
        gvirtus::put_record(w, cr::VirtualMemoryRequest{0, 0, 0, handle, 0});
      },
      [&](gvirtus::WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: nothing follows
        const auto bytes = r.get_blob(sizeof *prop);
        if (bytes.size() != sizeof *prop) {
          gvirtus::raise(gvirtus::ErrorKind::kInvalidInput,
                         "allocation properties of a wrong size");
        }
        std::memcpy(prop, bytes.data(), sizeof *prop);
      });
}

// Multicast objects (rows 304-309): the backend vets the object, the memory and the ranges as
// the session's (backend/virtual_memory.cpp); an object is a physical allocation the session may
// map and release as any other.
GVIRTUS_EXPORT CUresult cuMulticastCreate(CUmemGenericAllocationHandle* mcHandle,
                                          const CUmulticastObjectProp* prop) {
  if (mcHandle == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t created = 0;
  const CUresult result =
      cr::call(cr::Fn::cuMulticastCreate, {0, 0, 0, 0, 0}, prop, sizeof *prop, &created);
  if (result == CUDA_SUCCESS) *mcHandle = created;
  return result;
}

GVIRTUS_EXPORT CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev) {
  return cr::call(cr::Fn::cuMulticastAddDevice,
                  {0, 0, 0, mcHandle, static_cast<uint64_t>(static_cast<uint32_t>(dev))}, nullptr,
                  0, nullptr);
}

GVIRTUS_EXPORT CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                           CUmemGenericAllocationHandle memHandle, size_t memOffset,
                                           size_t size, unsigned long long flags) {
  return cr::remote_sync(
      cr::Fn::cuMulticastBindMem,
      [&](gvirtus::WireWriter& w) {
        gvirtus::put_record(w,
                            cr::VirtualMemoryRequest{mcOffset, size, memOffset, mcHandle, flags});
        w.put<uint64_t>(memHandle);
      },
      [](gvirtus::WireReader&) {});
}

GVIRTUS_EXPORT CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                            CUdeviceptr memptr, size_t size,
                                            unsigned long long flags) {
  return cr::call(cr::Fn::cuMulticastBindAddr, {memptr, size, mcOffset, mcHandle, flags}, nullptr,
                  0, nullptr);
}

GVIRTUS_EXPORT CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev,
                                          size_t mcOffset, size_t size) {
  return cr::call(cr::Fn::cuMulticastUnbind,
                  {mcOffset, size, 0, mcHandle, static_cast<uint64_t>(static_cast<uint32_t>(dev))},
                  nullptr, 0, nullptr);
}

// cuPointerGetAttribute and cuPointerGetAttributes in the client libcuda.so.1, answered from what
// the stub knows of addresses (memory_ranges.h): its device allocations (the allocation hooks
// record every one that succeeded, module and library globals included) and the host memory it
// allocated or registered, which the backend cannot see. An address it does not know is
// unregistered host memory, as the driver says of memory it never saw.
//
// What a remoting stub answers differently from a local driver, and why: host memory has no
// device pointer (the backend's GPU cannot reach this machine's memory: the same as
// cuMemHostGetDevicePointer), nothing is IPC or GPUDirect capable, and a buffer's id is its start
// address, unique among the process's live allocations. Boolean attributes are 4-byte integers,
// as the driver writes them.
#include <cuda.h>

#include <cstring>
#include <optional>

#include "cuda_remote_calls.h"
#include "frontend/process_session.h"
#include "plugins/cuda/frontend/contexts.h"
#include "plugins/cuda/frontend/memory_ranges.h"

namespace gvirtus::cuda {
namespace {

struct Known {
  CUmemorytype type;  // 0: the stub does not know the address
  AddressRanges::Range range;
};

Known what_is(CUdeviceptr ptr) {
  const void* address = as_pointer(ptr);
  if (const auto r = device_ranges().find(address)) return {CU_MEMORYTYPE_DEVICE, *r};
  if (const auto r = host_allocations().find(address)) return {CU_MEMORYTYPE_HOST, *r};
  if (const auto r = host_registrations().find(address)) return {CU_MEMORYTYPE_HOST, *r};
  return {static_cast<CUmemorytype>(0), {}};
}

template <typename T>
void put(void* data, T value) {
  std::memcpy(data, &value, sizeof value);
}

// One attribute of a known (or unknown) address into `data`. `strict` is cuPointerGetAttribute's
// contract: an attribute that does not apply is an error; cuPointerGetAttributes writes its
// null value instead.
CUresult attribute(const Known& k, CUdeviceptr ptr, CUpointer_attribute which, void* data,
                   bool strict) {
  const bool known = k.type != 0;
  const bool device = k.type == CU_MEMORYTYPE_DEVICE;
  const int ordinal = known && k.range.device >= 0 ? k.range.device : 0;
  switch (which) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: {
      CUcontext context = nullptr;
      if (known && primary_context(ordinal, &context) != CUDA_SUCCESS) context = nullptr;
      if (strict && context == nullptr) return CUDA_ERROR_INVALID_VALUE;
      put(data, context);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, static_cast<unsigned>(k.type));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: {
      // Host memory has one only in the memory shared with the backend (host_memory.cpp).
      const CUdeviceptr mapped = device ? ptr : shared_device_pointer(as_pointer(ptr));
      if (strict && mapped == 0) return CUDA_ERROR_INVALID_VALUE;
      put(data, mapped);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      // Memory the driver never saw is host memory at that address: cuPointerGetAttributes
      // gives the address itself (seen on an H200, driver 580), cuPointerGetAttribute an error.
      if (strict && (!known || device)) return CUDA_ERROR_INVALID_VALUE;
      put(data, !device ? const_cast<void*>(as_pointer(ptr)) : nullptr);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
      return CUDA_ERROR_NOT_SUPPORTED;  // tokens for a kernel driver on another machine
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      // Managed memory is mirrored here (frontend/managed_memory.h); it is device memory too.
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, device && process_session::managed_find(ptr) ? 1u : 0u);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, 0u);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, known ? 1u : 0u);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, static_cast<unsigned long long>(known ? k.range.start : 0));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, known ? ordinal : -2);  // -2: the driver's "no device" for unregistered memory
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, static_cast<CUdeviceptr>(known ? k.range.start : 0));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, static_cast<size_t>(known ? k.range.bytes : 0));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, 0ull);  // nothing is exportable across the remoting boundary
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, static_cast<unsigned>(known ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
                                            : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      if (strict && !known) return CUDA_ERROR_INVALID_VALUE;
      put(data, static_cast<CUmemoryPool>(nullptr));  // pools are not remoted yet
      return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuPointerGetAttribute(
    void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = cr::forked_child_status(); r != CUDA_SUCCESS) return r;
  return cr::attribute(cr::what_is(ptr), ptr, attribute, data, true);
}

extern "C" __attribute__((visibility("default"))) CUresult cuPointerGetAttributes(
    unsigned int numAttributes, CUpointer_attribute* attributes, void** data, CUdeviceptr ptr) {
  if (numAttributes == 0 || attributes == nullptr || data == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult r = cr::forked_child_status(); r != CUDA_SUCCESS) return r;
  const cr::Known known = cr::what_is(ptr);
  for (unsigned i = 0; i < numAttributes; ++i) {
    if (data[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = cr::attribute(known, ptr, attributes[i], data[i], false);
        r != CUDA_SUCCESS) {
      return r;
    }
  }
  return CUDA_SUCCESS;
}

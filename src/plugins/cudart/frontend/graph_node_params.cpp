// Graph nodes' parameters as they travel (graph_node_params.h; wire: common/graph_node_wire.h).
#include "plugins/cudart/frontend/graph_node_params.h"

#include <cuda_runtime_api.h>

#include <tuple>

#include "common/log.h"
#include "common/wire_record.h"
#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/array_info.h"
#include "plugins/cudart/frontend/host_functions.h"
#include "plugins/cudart/frontend/kernel_arguments.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {

// A null pointer where the runtime wants one: its initialisation failure first, as natively.
cudaError_t invalid_value() {
  if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) {
    return record_local_error(init);
  }
  return record_local_error(cudaErrorInvalidValue);
}

cudaError_t not_supported(const char* call, const char* why) {
  if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) {
    return record_local_error(init);
  }
  GVIRTUS_LOG(kWarning) << call << ": " << why;
  return record_local_error(cudaErrorNotSupported);
}

cudaError_t pack(const cudaKernelNodeParams* params, PackedKernelParams& packed, const char* call) {
  if (params == nullptr) return invalid_value();
  if (params->extra != nullptr) {
    return not_supported(call, "kernel arguments in the \"extra\" form are not remoted");
  }
  if (const cudaError_t failed = known_init_failure(); failed != cudaSuccess) return failed;
  Kernel* kernel = nullptr;
  if (const cudaError_t rc =
          pack_kernel_arguments(params->func, params->kernelParams, kernel, packed.bytes);
      rc != cudaSuccess) {
    return rc;
  }
  packed.wire = KernelNodeWire{kernel->id(),
                               {params->gridDim.x, params->gridDim.y, params->gridDim.z},
                               {params->blockDim.x, params->blockDim.y, params->blockDim.z},
                               params->sharedMemBytes};
  return cudaSuccess;
}

void put_kernel(WireWriter& w, const PackedKernelParams& packed) {
  put_record(w, packed.wire);
  w.put_blob(packed.bytes.data(), packed.bytes.size());
}

namespace {

// A copy side as the backend's GPU reaches it. `host`: the copy's kind says the side is host
// memory. nullopt: client memory the GPU cannot reach at replay time.
std::optional<uint64_t> reachable(const void* ptr, uint64_t bytes, bool host, cudaMemcpyKind kind) {
  if (shared_host_offset(ptr, bytes)) {
    if (const auto device = shared_host_device_pointer(ptr)) {
      return reinterpret_cast<uint64_t>(*device);
    }
  }
  if (host) return std::nullopt;
  // cudaMemcpyDefault: the client's page-locked memory is no device memory of the backend's
  // (device memory the stub never saw, a module's variable, is the backend's to vet).
  if (kind == cudaMemcpyDefault && !is_device_pointer(ptr) &&
      (host_allocations().find(ptr).has_value() || host_registrations().find(ptr).has_value())) {
    return std::nullopt;
  }
  return reinterpret_cast<uint64_t>(ptr);
}

bool host_source(cudaMemcpyKind kind) {
  return kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost;
}
bool host_destination(cudaMemcpyKind kind) {
  return kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost;
}

constexpr const char* kClientMemory =
    "a copy node with host memory the backend's GPU cannot reach when the graph runs (pageable "
    "memory, or page-locked memory over tcp): not supported";

}  // namespace

cudaError_t pack(const cudaMemcpy3DParms* p, MemcpyNodeWire& wire, const char* call) {
  if (p == nullptr) return invalid_value();
  if (!marshal::enum_holds<cudaMemcpyKind>(marshal::enum_bits(p->kind))) {
    return record_local_error(cudaErrorInvalidMemcpyDirection);
  }
  auto side = [](const cudaPitchedPtr& ptr, const cudaPos& pos) {
    return CopySideWire{
        reinterpret_cast<uint64_t>(ptr.ptr), ptr.pitch, ptr.xsize, ptr.ysize, pos.x, pos.y, pos.z};
  };
  wire = MemcpyNodeWire{side(p->srcPtr, p->srcPos),
                        side(p->dstPtr, p->dstPos),
                        p->extent.width,
                        p->extent.height,
                        p->extent.depth,
                        p->kind,
                        wire_handle(p->srcArray),
                        wire_handle(p->dstArray)};
  // With an array taking part the extent and a pointer side's position x count its elements.
  size_t element = 1;
  if (p->srcArray != nullptr || p->dstArray != nullptr) {
    const cudaArray_t array = p->srcArray != nullptr ? p->srcArray : p->dstArray;
    if (const cudaError_t rc = array_element_bytes(array, element); rc != cudaSuccess) return rc;
    if (element == 0) element = 1;  // no whole-byte elements: the runtime judges the copy
  }
  for (auto [side_wire, host, array] :
       {std::tuple{&wire.src, host_source(p->kind), p->srcArray},
        std::tuple{&wire.dst, host_destination(p->kind), p->dstArray}}) {
    if (array != nullptr) continue;  // the backend vets it as the session's
    const auto extent = copy_side_extent(*side_wire, wire.width, wire.height, wire.depth, element);
    // An impossible extent is the backend's to refuse (the runtime's error).
    if (!extent || side_wire->ptr == 0) continue;
    const auto address =
        reachable(reinterpret_cast<const void*>(side_wire->ptr), *extent, host, p->kind);
    if (!address) return not_supported(call, kClientMemory);
    side_wire->ptr = *address;
  }
  return cudaSuccess;
}

cudaError_t pack_1d(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                    Memcpy1DNodeWire& wire, const char* call) {
  if (!marshal::enum_holds<cudaMemcpyKind>(marshal::enum_bits(kind))) {
    return record_local_error(cudaErrorInvalidMemcpyDirection);
  }
  wire = Memcpy1DNodeWire{reinterpret_cast<uint64_t>(dst), reinterpret_cast<uint64_t>(src), count,
                          kind};
  if (src != nullptr && count > 0) {
    const auto address = reachable(src, count, host_source(kind), kind);
    if (!address) return not_supported(call, kClientMemory);
    wire.src = *address;
  }
  if (dst != nullptr && count > 0) {
    const auto address = reachable(dst, count, host_destination(kind), kind);
    if (!address) return not_supported(call, kClientMemory);
    wire.dst = *address;
  }
  return cudaSuccess;
}

MemsetNodeWire pack(const cudaMemsetParams& p) {
  return MemsetNodeWire{
      reinterpret_cast<uint64_t>(p.dst), p.pitch, p.value, p.elementSize, p.width, p.height};
}

// A memory allocation node's parameters (graph_node_wire.h).
void put_alloc(WireWriter& w, const cudaMemPoolProps& props, const cudaMemAccessDesc* access,
               size_t n, size_t bytes) {
  w.put_raw(&props, sizeof props);
  w.put<uint32_t>(static_cast<uint32_t>(n));
  if (n > 0) w.put_raw(access, n * sizeof(cudaMemAccessDesc));
  w.put<uint64_t>(bytes);
}

bool bad_access(const cudaMemAccessDesc* access, size_t n) {
  return (access == nullptr && n > 0) || n > kMaxAccessDescs;
}

cudaError_t pack(const cudaGraphNodeParams* p, PackedNodeParams& packed, const char* call) {
  if (p == nullptr) return invalid_value();
  packed.type = marshal::enum_bits(p->type);
  switch (packed.type) {
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParams kernel{p->kernel.func,         p->kernel.gridDim,
                                        p->kernel.blockDim,     p->kernel.sharedMemBytes,
                                        p->kernel.kernelParams, p->kernel.extra};
      return pack(&kernel, packed.kernel, call);
    }
    case cudaGraphNodeTypeMemcpy: {
      const auto& reserved = p->memcpy.reserved;
      if (p->memcpy.flags != 0 || reserved[0] != 0 || reserved[1] != 0 || reserved[2] != 0) {
        return invalid_value();
      }
      return pack(&p->memcpy.copyParams, packed.memcpy, call);
    }
    case cudaGraphNodeTypeMemset:
      packed.memset = MemsetNodeWire{reinterpret_cast<uint64_t>(p->memset.dst),
                                     p->memset.pitch,
                                     p->memset.value,
                                     p->memset.elementSize,
                                     p->memset.width,
                                     p->memset.height};
      return cudaSuccess;
    case cudaGraphNodeTypeEmpty:
      return cudaSuccess;
    case cudaGraphNodeTypeWaitEvent:
      packed.handle = wire_handle(p->eventWait.event);
      return cudaSuccess;
    case cudaGraphNodeTypeEventRecord:
      packed.handle = wire_handle(p->eventRecord.event);
      return cudaSuccess;
    case cudaGraphNodeTypeGraph:
      packed.handle = wire_handle(p->graph.graph);
      packed.ownership = static_cast<uint32_t>(marshal::enum_bits(p->graph.ownership));
      if (packed.ownership > cudaGraphChildGraphOwnershipMove) return invalid_value();
      return cudaSuccess;
    case cudaGraphNodeTypeMemAlloc:
      if (bad_access(p->alloc.accessDescs, p->alloc.accessDescCount)) return invalid_value();
      packed.alloc = &p->alloc;
      return cudaSuccess;
    case cudaGraphNodeTypeMemFree:
      packed.handle = reinterpret_cast<uint64_t>(p->free.dptr);
      return cudaSuccess;
    case cudaGraphNodeTypeHost:
      if (p->host.fn == nullptr) return invalid_value();
      // The function travels as its token (host_functions.h); a failed call leaves it registered
      // (a token costs a few bytes and names no gate).
      return host_function_token(p->host.fn, p->host.userData, packed.handle);
    case cudaGraphNodeTypeConditional:
      if (p->conditional.size == 0 || p->conditional.size > kMaxConditionalBodies) {
        return invalid_value();
      }
      packed.handle = p->conditional.handle;
      packed.conditional_type = static_cast<uint32_t>(marshal::enum_bits(p->conditional.type));
      packed.conditional_size = p->conditional.size;
      return cudaSuccess;
    case cudaGraphNodeTypeExtSemaphoreSignal:
    case cudaGraphNodeTypeExtSemaphoreWait:
      return not_supported(call, "external semaphore nodes are not remoted");
    default:
      return invalid_value();
  }
}

void put_node_params(WireWriter& w, const PackedNodeParams& packed) {
  w.put<int32_t>(packed.type);
  switch (packed.type) {
    case cudaGraphNodeTypeKernel:
      put_kernel(w, packed.kernel);
      break;
    case cudaGraphNodeTypeMemcpy:
      put_record(w, packed.memcpy);
      break;
    case cudaGraphNodeTypeMemset:
      put_record(w, packed.memset);
      break;
    case cudaGraphNodeTypeGraph:
      w.put<uint64_t>(packed.handle);
      w.put<uint32_t>(packed.ownership);
      break;
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeMemFree:
    case cudaGraphNodeTypeHost:
      w.put<uint64_t>(packed.handle);
      break;
    case cudaGraphNodeTypeMemAlloc:
      put_alloc(w, packed.alloc->poolProps, packed.alloc->accessDescs,
                packed.alloc->accessDescCount, packed.alloc->bytesize);
      break;
    case cudaGraphNodeTypeConditional:
      w.put<uint64_t>(packed.handle);
      w.put<uint32_t>(packed.conditional_type);
      w.put<uint32_t>(packed.conditional_size);
      break;
    default:  // empty
      break;
  }
}

}  // namespace gvirtus::cudart

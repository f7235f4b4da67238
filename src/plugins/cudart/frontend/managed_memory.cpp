// Managed memory in the runtime stub (docs/managed-memory.md). The backend's runtime allocates it
// (cudaMallocManaged); the stub mirrors the region here, at the same address (the frontend's
// frontend/managed_memory.h keeps the two coherent), and records it as a device allocation:
// copies and memsets naming it run on the backend, on the backend's copy, after the host's writes
// have reached it (the frontend flushes them before any request goes out).
//
// The coherence points of this stub: after work that may change managed memory on the device - a
// kernel launch (launch.cpp), a graph launch, a copy into it (memcpy.cpp) - and at every
// synchronisation (the device, a stream or an event waited for, or a stream or event found done),
// the mirror's clean copies are dropped, so that the host's next access fetches what the device
// wrote. The host's own writes are never dropped.
//
// The mirror's transfers are cudaMemcpy requests by device address (common/memcpy_wire.h),
// encoded in buffers of their own: a fault may come while the faulting thread is in the middle of
// encoding a request of its own.
#include "common/log.h"
#include "common/managed_batch_wire.h"
#include "common/wire_record.h"
#include "frontend/managed_transfer.h"
#include "plugins/cudart/common/graph_wire.h"
#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/frontend/managed_variables.h"
#include "plugins/cudart/frontend/registry.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// Moves a run of chunks (at most the mirror's kMaxTransferBytes, below kMemcpyChunkBytes)
// between the backend's copy at `address` and `host`: a synchronous cudaMemcpy, which waits for
// the device work before it, as a managed access after a synchronisation expects.
int move(uint64_t address, void* host, uint64_t bytes, bool fetch) {
  auto* device = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
  return process_session::managed_transfer(
      call_id(Fn::cudaMemcpy),
      [&](WireWriter& w) {
        put_record(w,
                   MemcpyRequest{fetch ? host : device, fetch ? device : host, bytes,
                                 fetch ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, nullptr});
      },
      cudaSuccess, host, bytes, fetch);
}

int fetch(void*, uint64_t address, void* host, uint64_t bytes) {
  return move(address, host, bytes, true);
}

int flush(void*, uint64_t address, void* host, uint64_t bytes) {
  return move(address, host, bytes, false);
}

// After a synchronisation: what the device wrote is fetched again when the host reads it.
cudaError_t synchronised(cudaError_t result) {
  if (result == cudaSuccess) process_session::managed_invalidate();
  return result;
}

}  // namespace

cudaError_t mirror_managed_variable(Module& module, const Variable& variable) {
  try {
    process_session::managed_map_variable(&module, variable.address, variable.bytes, fetch, flush,
                                          nullptr);
  } catch (const Error& e) {
    GVIRTUS_LOG(kWarning) << "libcudart.so.13: managed variable " << variable.name
                          << " cannot be mirrored in this process: " << e.what();
    return cudaErrorMemoryAllocation;
  }
  return cudaSuccess;
}

bool init_managed_variables(Module& module) {
  for (Variable* variable : registered_managed_variables(module)) {
    if (const cudaError_t rc = prepare(*variable); rc != cudaSuccess) {
      GVIRTUS_LOG(kWarning) << "libcudart.so.13: managed variable " << variable->name
                            << " cannot be had: " << cudaGetErrorName(rc);
      return false;
    }
    if (mirror_managed_variable(module, *variable) != cudaSuccess) return false;
    *variable->slot = reinterpret_cast<void*>(static_cast<uintptr_t>(variable->address));
  }
  return true;
}

void forget_managed_variables(Module& module) {
  process_session::managed_unmap_owner(&module, fetch);
}

}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaMallocManaged(void** devPtr, size_t size,
                                                    unsigned int flags) {
  const cudaError_t result = cr::remote::cudaMallocManaged(devPtr, size, flags);
  if (result != cudaSuccess || devPtr == nullptr) return result;
  try {
    gvirtus::process_session::managed_map(reinterpret_cast<uintptr_t>(*devPtr), size, cr::fetch,
                                          cr::flush, nullptr);
  } catch (const gvirtus::Error& e) {
    // The backend's address is taken here: the program cannot reach the memory at it.
    GVIRTUS_LOG(kWarning) << "libcudart.so.13: managed memory of " << size
                          << " bytes cannot be mirrored in this process: " << e.what();
    (void)cr::remote::cudaFree(*devPtr);
    *devPtr = nullptr;
    return cudaErrorMemoryAllocation;
  }
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFree(void* devPtr) {
  const cudaError_t result = cr::remote::cudaFree(devPtr);
  if (result == cudaSuccess && devPtr != nullptr) {
    gvirtus::process_session::managed_unmap(reinterpret_cast<uintptr_t>(devPtr));
  }
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaDeviceSynchronize() {
  return cr::synchronised(cr::remote::cudaDeviceSynchronize());
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return cr::synchronised(cr::remote::cudaStreamSynchronize(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return cr::synchronised(cr::remote::cudaStreamQuery(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return cr::synchronised(cr::remote::cudaEventSynchronize(event));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) {
  return cr::synchronised(cr::remote::cudaEventQuery(event));
}

// Sent ahead, as before; the graph's kernels may write managed memory.
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  const cudaError_t result = cr::remote::ahead::cudaGraphLaunch(graphExec, stream);
  gvirtus::process_session::managed_invalidate();
  return result;
}

// Sent ahead once the range is seen to be managed memory: the runtime refuses anything else at
// once (and as the last error), not at the stream's next synchronisation.
GVIRTUS_CUDART_EXPORT cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count,
                                                       cudaMemLocation location, unsigned int flags,
                                                       cudaStream_t stream) {
  if (!gvirtus::process_session::managed_covers(reinterpret_cast<uintptr_t>(devPtr), count)) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  return cr::remote::ahead::cudaMemPrefetchAsync(devPtr, count, location, flags, stream);
}

namespace {

// A batch of prefetches or discards (common/managed_batch_wire.h): every range must lie in one
// managed region, as a single prefetch's must (refused at once otherwise); the batch goes ahead
// whole. A discard leaves the ranges indeterminate: the mirror drops its clean copies of them.
cudaError_t managed_batch(cr::Fn fn, void** dptrs, size_t* sizes, size_t count,
                          cudaMemLocation* locations, size_t* firsts, size_t location_count,
                          unsigned long long flags, cudaStream_t stream) {
  if (!gvirtus::managed_batch_shape_ok(dptrs, sizes, count, locations, firsts, location_count,
                                       flags, fn != cr::Fn::cudaMemDiscardBatchAsync)) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  for (size_t i = 0; i < count; ++i) {
    if (!gvirtus::process_session::managed_covers(reinterpret_cast<uintptr_t>(dptrs[i]),
                                                  sizes[i])) {
      return cr::record_local_error(cudaErrorInvalidValue);
    }
  }
  const cudaError_t result = cr::remote_async(fn, [&](gvirtus::WireWriter& w) {
    w.put<uint64_t>(cr::wire_handle(stream));
    gvirtus::put_managed_batch(w, flags, dptrs, sizes, count, locations, firsts, location_count);
  });
  if (fn != cr::Fn::cudaMemPrefetchBatchAsync) {
    for (size_t i = 0; i < count; ++i) {
      gvirtus::process_session::managed_invalidate_range(reinterpret_cast<uintptr_t>(dptrs[i]),
                                                         sizes[i]);
    }
  }
  return result;
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t
cudaMemPrefetchBatchAsync(void** dptrs, size_t* sizes, size_t count, cudaMemLocation* prefetchLocs,
                          size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
                          cudaStream_t stream) {
  return managed_batch(cr::Fn::cudaMemPrefetchBatchAsync, dptrs, sizes, count, prefetchLocs,
                       prefetchLocIdxs, numPrefetchLocs, flags, stream);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemDiscardBatchAsync(void** dptrs, size_t* sizes,
                                                           size_t count, unsigned long long flags,
                                                           cudaStream_t stream) {
  return managed_batch(cr::Fn::cudaMemDiscardBatchAsync, dptrs, sizes, count, nullptr, nullptr, 0,
                       flags, stream);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemDiscardAndPrefetchBatchAsync(
    void** dptrs, size_t* sizes, size_t count, cudaMemLocation* prefetchLocs,
    size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
    cudaStream_t stream) {
  return managed_batch(cr::Fn::cudaMemDiscardAndPrefetchBatchAsync, dptrs, sizes, count,
                       prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, stream);
}

// Several attributes of a managed range: each asked as cudaMemRangeGetAttribute asks it (row
// 275), the first failure answered. (One round trip each: a program asks for a few, rarely.)
GVIRTUS_CUDART_EXPORT cudaError_t cudaMemRangeGetAttributes(void** data, size_t* dataSizes,
                                                            cudaMemRangeAttribute* attributes,
                                                            size_t numAttributes,
                                                            const void* devPtr, size_t count) {
  if (data == nullptr || dataSizes == nullptr || attributes == nullptr || numAttributes == 0) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  for (size_t i = 0; i < numAttributes; ++i) {
    const cudaError_t result =
        cudaMemRangeGetAttribute(data[i], dataSizes[i], attributes[i], devPtr, count);
    if (result != cudaSuccess) return result;
  }
  return cudaSuccess;
}

// Managed memory in the client libcuda.so.1. The backend's driver allocates it (cuMemAllocManaged);
// the stub mirrors the region here, at the same address (frontend/managed_memory.h keeps the two
// coherent), and records it as device memory too: copies and memsets naming it run on the
// backend, on the backend's copy, after the host's writes have reached it (the frontend flushes
// them before any request goes out).
//
// The coherence points of this stub: after work that may change managed memory on the device - a
// kernel launch (launch.cpp), a graph launch, a copy into it (copies.cpp) - and at every
// synchronisation (the context, a stream or an event waited for, or a stream or event found done),
// the mirror's clean copies are dropped, so that the host's next access fetches what the device
// wrote. The host's own writes are never dropped.
//
// The mirror's transfers are this stub's copies by device address (driver_wire.h's CopyRequest),
// encoded in buffers of their own: a fault may come while the faulting thread is in the middle of
// encoding a request of its own.
#include <cuda.h>

#include <string>

#include "common/call_marshal.h"
#include "common/log.h"
#include "common/managed_batch_wire.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/managed_transfer.h"
#include "frontend/process_session.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/managed_variables.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

// Moves a run of chunks (at most the mirror's kMaxTransferBytes, below kCopyChunkBytes) between
// the backend's copy at `address` and `host`: a synchronous copy on the legacy stream, which waits
// for the device work before it, as a managed access after a synchronisation expects.
int move(uint64_t address, void* host, uint64_t bytes, bool fetch) {
  const stub::RouteScope route(pool_backend_of_address(address));
  return process_session::managed_transfer(
      call_id(fetch ? Fn::cuMemcpyDtoH_v2 : Fn::cuMemcpyHtoD_v2),
      [&](WireWriter& w) {
        put_record(w, CopyRequest{address, bytes, nullptr});
      },
      CUDA_SUCCESS, host, bytes, fetch);
}

int fetch(void*, uint64_t address, void* host, uint64_t bytes) {
  return move(address, host, bytes, true);
}

int flush(void*, uint64_t address, void* host, uint64_t bytes) {
  return move(address, host, bytes, false);
}

// After a synchronisation: what the device wrote is fetched again when the host reads it.
CUresult synchronised(CUresult result) {
  if (result == CUDA_SUCCESS) process_session::managed_invalidate();
  return result;
}

}  // namespace

CUresult mirror_managed_variable(const void* library, CUdeviceptr address, size_t bytes) {
  try {
    process_session::managed_map_variable(library, address, bytes, fetch, flush, nullptr);
  } catch (const Error& e) {
    GVIRTUS_LOG(kWarning) << "libcuda.so.1: a managed variable of " << bytes
                          << " bytes cannot be mirrored in this process: " << e.what();
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return CUDA_SUCCESS;
}

void forget_managed_variables(const void* library) {
  process_session::managed_unmap_owner(library, fetch);
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  const CUresult result = cr::remote::cuMemAllocManaged(dptr, bytesize, flags);
  if (result != CUDA_SUCCESS || dptr == nullptr) return result;
  try {
    gvirtus::process_session::managed_map(*dptr, bytesize, cr::fetch, cr::flush, nullptr);
  } catch (const gvirtus::Error& e) {
    // The backend's address is taken here: the program cannot reach the memory at it.
    GVIRTUS_LOG(kWarning) << "libcuda.so.1: managed memory of " << bytesize
                          << " bytes cannot be mirrored in this process: " << e.what();
    (void)cr::remote::cuMemFree_v2(*dptr);
    *dptr = 0;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return result;
}

GVIRTUS_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  const CUresult result = cr::remote::cuMemFree_v2(dptr);
  if (result == CUDA_SUCCESS) gvirtus::process_session::managed_unmap(dptr);
  return result;
}

GVIRTUS_EXPORT CUresult cuCtxSynchronize() {
  return cr::synchronised(cr::remote::cuCtxSynchronize());
}

GVIRTUS_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  return cr::synchronised(cr::remote::cuCtxSynchronize_v2(ctx));
}

GVIRTUS_EXPORT CUresult cuStreamSynchronize(CUstream hStream) {
  return cr::synchronised(cr::remote::cuStreamSynchronize(hStream));
}

GVIRTUS_EXPORT CUresult cuStreamQuery(CUstream hStream) {
  return cr::synchronised(cr::remote::cuStreamQuery(hStream));
}

GVIRTUS_EXPORT CUresult cuEventSynchronize(CUevent hEvent) {
  return cr::synchronised(cr::remote::cuEventSynchronize(hEvent));
}

GVIRTUS_EXPORT CUresult cuEventQuery(CUevent hEvent) {
  return cr::synchronised(cr::remote::cuEventQuery(hEvent));
}

// Sent ahead, as before; the graph's kernels may write managed memory.
GVIRTUS_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  const CUresult result = cr::remote::ahead::cuGraphLaunch(hGraphExec, hStream);
  gvirtus::process_session::managed_invalidate();
  return result;
}

// The legacy forms (CUDA 8 to 12): a device ordinal, CU_DEVICE_CPU for the host, where CUDA 13
// takes a location.
#undef cuMemPrefetchAsync
#undef cuMemAdvise

namespace {

CUmemLocation location_of(CUdevice device) {
  CUmemLocation location{};
  location.type = device == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  location.id = device == CU_DEVICE_CPU ? 0 : device;
  return location;
}

}  // namespace

// Sent ahead once the range is seen to be managed memory: the driver refuses anything else at
// once, not at the stream's next synchronisation.
GVIRTUS_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
                                              CUmemLocation location, unsigned int flags,
                                              CUstream hStream) {
  if (!gvirtus::process_session::managed_covers(devPtr, count)) return CUDA_ERROR_INVALID_VALUE;
  return cr::remote::ahead::cuMemPrefetchAsync_v2(devPtr, count, location, flags, hStream);
}

GVIRTUS_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                           CUstream hStream) {
  return cuMemPrefetchAsync_v2(devPtr, count, location_of(dstDevice), 0, hStream);
}

GVIRTUS_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count,
                                                CUdevice dstDevice, CUstream hStream) {
  return cuMemPrefetchAsync_v2(devPtr, count, location_of(dstDevice), 0,
                               hStream != nullptr ? hStream : CU_STREAM_PER_THREAD);
}

GVIRTUS_EXPORT CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                    CUdevice device) {
  return cuMemAdvise_v2(devPtr, count, advice, location_of(device));
}

namespace {

// A batch of prefetches or discards (rows 285-287, src/common/managed_batch_wire.h): every range
// must lie in one managed region, as a single prefetch's must (refused at once otherwise); the
// batch goes ahead whole, to the stream's backend. A discard leaves the ranges indeterminate: the
// mirror drops its copies of them, so the host reads the device's bytes next.
CUresult managed_batch(cr::Fn fn, CUdeviceptr* dptrs, size_t* sizes, size_t count,
                       CUmemLocation* locations, size_t* firsts, size_t location_count,
                       unsigned long long flags, CUstream stream) {
  if (!gvirtus::managed_batch_shape_ok(dptrs, sizes, count, locations, firsts, location_count,
                                       flags, fn != cr::Fn::cuMemDiscardBatchAsync)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (size_t i = 0; i < count; ++i) {
    if (!gvirtus::process_session::managed_covers(dptrs[i], sizes[i])) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_handle("stream", stream));
  const CUresult result = cr::remote_async(fn, [&](gvirtus::WireWriter& w) {
    gvirtus::marshal::put_value(w, stream);
    gvirtus::put_managed_batch(w, flags, dptrs, sizes, count, locations, firsts, location_count);
  });
  if (fn != cr::Fn::cuMemPrefetchBatchAsync) {
    for (size_t i = 0; i < count; ++i) {
      gvirtus::process_session::managed_invalidate_range(dptrs[i], sizes[i]);
    }
  }
  return result;
}

}  // namespace

#undef cuMemPrefetchBatchAsync
#undef cuMemDiscardBatchAsync
#undef cuMemDiscardAndPrefetchBatchAsync

GVIRTUS_EXPORT CUresult cuMemPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                                CUmemLocation* prefetchLocs,
                                                size_t* prefetchLocIdxs, size_t numPrefetchLocs,
                                                unsigned long long flags, CUstream hStream) {
  return managed_batch(cr::Fn::cuMemPrefetchBatchAsync, dptrs, sizes, count, prefetchLocs,
                       prefetchLocIdxs, numPrefetchLocs, flags, hStream);
}

GVIRTUS_EXPORT CUresult cuMemDiscardBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                               unsigned long long flags, CUstream hStream) {
  return managed_batch(cr::Fn::cuMemDiscardBatchAsync, dptrs, sizes, count, nullptr, nullptr, 0,
                       flags, hStream);
}

GVIRTUS_EXPORT CUresult cuMemDiscardAndPrefetchBatchAsync(
    CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* prefetchLocs,
    size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream) {
  return managed_batch(cr::Fn::cuMemDiscardAndPrefetchBatchAsync, dptrs, sizes, count, prefetchLocs,
                       prefetchLocIdxs, numPrefetchLocs, flags, hStream);
}

// Several attributes of a managed range: each asked as cuMemRangeGetAttribute asks it (row 257),
// the first failure answered. (One round trip each: a program asks for a few, rarely.)
GVIRTUS_EXPORT CUresult cuMemRangeGetAttributes(void** data, size_t* dataSizes,
                                                CUmem_range_attribute* attributes,
                                                size_t numAttributes, CUdeviceptr devPtr,
                                                size_t count) {
  if (data == nullptr || dataSizes == nullptr || attributes == nullptr || numAttributes == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (size_t i = 0; i < numAttributes; ++i) {
    const CUresult result =
        cuMemRangeGetAttribute(data[i], dataSizes[i], attributes[i], devPtr, count);
    if (result != CUDA_SUCCESS) return result;
  }
  return CUDA_SUCCESS;
}

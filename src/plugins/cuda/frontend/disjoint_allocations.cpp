// Device allocations in a pool of backends, kept disjoint. Each backend's driver places device
// memory in its own process's address space, from the same layout in every process (a driver's
// device addresses are not randomised), so two backends hand out the same addresses: the first
// allocation on each is at the same place. The pool routes a call by the allocation its address
// lies in (pool_routes.h), which must then be one backend's. So an allocation that overlaps
// another backend's is kept aside and the call made again, on the same backend, until one lands
// clear of the others (each attempt moves that backend's allocator on); the ones kept aside are
// then freed. The application sees one allocation, as natively. With one backend nothing of this
// runs.
//
// cuMemAlloc_v2, cuMemAllocPitch_v2, cuMemAllocAsync and cuMemAllocFromPoolAsync are wrapped rows
// of the call table: these are their exports.
#include <cuda.h>

#include <atomic>
#include <vector>

#include "common/call_marshal.h"
#include "common/function_ref.h"
#include "common/log.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

// Attempts before giving up: each one lands past the last on that backend, so a handful suffice
// unless the other backends hold most of the address range this one allocates from.
constexpr int kAttempts = 64;

// `allocate` makes the call (its notes refuse a colliding allocation: pool_note_address);
// `release` frees one the call made, on the backend that made it, without the stub's notes (none
// were made).
CUresult disjoint(CUdeviceptr* dptr, FunctionRef<CUresult()> allocate,
                  FunctionRef<void(CUdeviceptr)> release) {
  (void)pool_take_collision();  // none is pending, but one left behind must not be taken for ours
  CUresult result = allocate();
  if (!pooled() || result != CUDA_SUCCESS || dptr == nullptr) return result;
  std::vector<PoolCollision> aside;
  while (const auto collision = pool_take_collision()) {
    aside.push_back(*collision);
    if (aside.size() == kAttempts) {
      GVIRTUS_LOG(kError) << "pool backend " << collision->backend << " gave " << kAttempts
                          << " device allocations that overlap other backends' ones; "
                             "answering CUDA_ERROR_OUT_OF_MEMORY";
      *dptr = 0;
      result = CUDA_ERROR_OUT_OF_MEMORY;
      break;
    }
    result = allocate();
    if (result != CUDA_SUCCESS) break;
  }
  if (!aside.empty()) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      GVIRTUS_LOG(kNotice) << "pool backend " << aside.front().backend
                           << " placed device memory at 0x" << std::hex << aside.front().address
                           << std::dec
                           << ", where another backend's lies; allocated again (the pool keeps "
                              "its backends' device memory disjoint; said once)";
    }
  }
  for (const PoolCollision& c : aside) {
    const stub::RouteScope route(c.backend);
    release(c.address);
  }
  return result;
}

// The rows' own requests, encoded as the generated senders encode them, but not routed by the
// address (the pool notes it as another backend's) and not noted.
void free_now(CUdeviceptr address) {
  (void)remote_sync(
      Fn::cuMemFree_v2, [&](WireWriter& w) { marshal::put_value(w, address); }, [](WireReader&) {});
}

void free_in_stream(CUdeviceptr address, CUstream stream) {  // an async row: sent ahead
  (void)remote_async(Fn::cuMemFreeAsync, [&](WireWriter& w) {
    marshal::put_value(w, address);
    marshal::put_value(w, stream);
  });
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cu = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr* dptr,
                                                                         size_t bytesize) {
  return cu::disjoint(
      dptr, [&] { return cu::remote::cuMemAlloc_v2(dptr, bytesize); },
      [](CUdeviceptr address) { cu::free_now(address); });
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemAllocPitch_v2(
    CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
    unsigned int ElementSizeBytes) {
  return cu::disjoint(
      dptr,
      [&] {
        return cu::remote::cuMemAllocPitch_v2(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
      },
      [](CUdeviceptr address) { cu::free_now(address); });
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemAllocAsync(CUdeviceptr* dptr,
                                                                           size_t bytesize,
                                                                           CUstream hStream) {
  return cu::disjoint(
      dptr, [&] { return cu::remote::cuMemAllocAsync(dptr, bytesize, hStream); },
      [&](CUdeviceptr address) { cu::free_in_stream(address, hStream); });
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemAllocFromPoolAsync(
    CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  return cu::disjoint(
      dptr, [&] { return cu::remote::cuMemAllocFromPoolAsync(dptr, bytesize, pool, hStream); },
      [&](CUdeviceptr address) { cu::free_in_stream(address, hStream); });
}

// Peer access in a pool of backends (pool_routes.h): two devices of different backends are never
// peers - no load or store reaches another machine's memory (copies between them are relayed:
// copies.cpp) - so the stub answers for such a pair itself, as the driver answers for two
// devices that cannot be peers. A pair on one backend is that backend's driver's to answer.
#include <cuda.h>

#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/frontend/contexts.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

bool on_different_backends(CUdevice a, CUdevice b) {
  const auto backend_a = pool_backend_of_device(a);
  const auto backend_b = pool_backend_of_device(b);
  return backend_a && backend_b && *backend_a != *backend_b;
}

// Whether `peer` is a context of another backend than the calling thread's current context.
bool on_another_backend(CUcontext peer) {
  const auto peer_backend = pool_backend_of_handle("context", peer);
  const auto current_backend = pool_backend_of_handle("context", current_context());
  return peer_backend && current_backend && *peer_backend != *current_backend;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuDeviceCanAccessPeer(int* canAccessPeer,
                                                                                 CUdevice dev,
                                                                                 CUdevice peerDev) {
  if (canAccessPeer == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (cr::on_different_backends(dev, peerDev)) {
    *canAccessPeer = 0;
    return CUDA_SUCCESS;
  }
  return cr::remote::cuDeviceCanAccessPeer(canAccessPeer, dev, peerDev);
}

// Across backends: no access, no native atomics, no array access, and rank 0 (the lowest), as the
// driver reports a pair of devices that are not peers.
extern "C" __attribute__((visibility("default"))) CUresult cuDeviceGetP2PAttribute(
    int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (cr::on_different_backends(srcDevice, dstDevice)) {
    *value = 0;
    return CUDA_SUCCESS;
  }
  return cr::remote::cuDeviceGetP2PAttribute(value, attrib, srcDevice, dstDevice);
}

// Across backends: no atomic operation at all, as for two devices that are not peers.
extern "C" __attribute__((visibility("default"))) CUresult cuDeviceGetP2PAtomicCapabilities(
    unsigned int* capabilities, const CUatomicOperation* operations, unsigned int count,
    CUdevice srcDevice, CUdevice dstDevice) {
  if ((capabilities == nullptr || operations == nullptr) && count > 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (cr::on_different_backends(srcDevice, dstDevice)) {
    for (unsigned int i = 0; i < count; ++i) capabilities[i] = 0;
    return CUDA_SUCCESS;
  }
  return cr::remote::cuDeviceGetP2PAtomicCapabilities(capabilities, operations, count, srcDevice,
                                                      dstDevice);
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxEnablePeerAccess(
    CUcontext peerContext, unsigned int Flags) {
  if (cr::on_another_backend(peerContext)) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
  return cr::remote::cuCtxEnablePeerAccess(peerContext, Flags);
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxDisablePeerAccess(
    CUcontext peerContext) {
  if (cr::on_another_backend(peerContext)) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  return cr::remote::cuCtxDisablePeerAccess(peerContext);
}

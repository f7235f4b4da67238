// What a reset of a device's primary context, or the release of its last reference, destroys,
// forgotten by the session, whichever plugin reset it (the descriptor's handle_owner, after_call
// and device_reset; backend/services/ session_services.h): a handle is owned by the device of the
// context current when it was made, and a reset forgets that device's context-bound handles, so
// none reaches the driver after the driver freed it. A reset through the cuda plugin
// (cuDevicePrimaryCtxReset) is announced to the session's other plugins, and one through the cudart
// plugin (cudaDeviceReset) is heard here.
#include <cuda.h>

#include "backend/services/rejections.h"
#include "common/call_marshal.h"
#include "cuda_calls.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/ipc.h"
#include "plugins/cuda/backend/textures.h"

namespace gvirtus::cuda {
namespace {

constexpr uint64_t bit(HandleKind kind) {
  return uint64_t{1} << static_cast<uint16_t>(kind);
}

// What a primary context's reset destroys: its modules with their functions, streams, events,
// executable graphs, arrays and mipmapped arrays (their levels with them), and texture and surface
// objects. Contexts of one's own, libraries and their kernels
// (context-independent), graphs and memory pools are not the context's, and stay.
constexpr uint64_t kContextBound = bit(HandleKind::kModule) | bit(HandleKind::kFunction) |
                                   bit(HandleKind::kStream) | bit(HandleKind::kEvent) |
                                   bit(HandleKind::kExecutableGraph) | bit(HandleKind::kArray) |
                                   bit(HandleKind::kMipmappedArray);

}  // namespace

int context_device() {
  CUdevice device = -1;
  if (real().cuCtxGetDevice == nullptr || real().cuCtxGetDevice(&device) != CUDA_SUCCESS) return -1;
  return device;
}

// Also what a failure sent ahead left pending on this thread (backend/services/rejections.h):
// the reset context took it along.
void forget_device(int device) {
  services::session_services().handles.forget_owned(device, kContextBound);
  forget_textures(device);
  forget_ipc();
  services::drop_ahead_failure();
}

// A primary context goes by a reset, or by the release of its last reference (the driver then
// destroys it as a reset does): either way the session forgets what it held, and tells its other
// plugins.
void after_call(Fn fn, WireReader request, CUresult result) {
  if (fn == Fn::cuCtxDestroy_v2 && result == CUDA_SUCCESS) services::drop_ahead_failure();
  if (result != CUDA_SUCCESS ||
      (fn != Fn::cuDevicePrimaryCtxReset_v2 && fn != Fn::cuDevicePrimaryCtxRelease_v2)) {
    return;
  }
  const auto device = marshal::get_value<CUdevice>(request);
  if (fn == Fn::cuDevicePrimaryCtxRelease_v2) {
    unsigned flags = 0;
    int active = 1;
    if (real().cuDevicePrimaryCtxGetState(device, &flags, &active) != CUDA_SUCCESS || active) {
      return;  // other references keep it
    }
  }
  forget_device(device);
  services::session_services().peer_device_reset(device);
}

}  // namespace gvirtus::cuda

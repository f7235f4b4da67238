// What the end of a context destroys, forgotten by the session (the descriptor's handle_owner,
// after_call and device_reset; backend/services/session_services.h), so that no handle reaches
// the driver after the driver freed it. A handle is owned by the context current when it was
// made: a context of one's own by a number of its own (own_contexts.h), a primary context by its
// device. A primary context ends by a reset or by the release of its last reference, whichever
// plugin of the session did it: that device's context-bound handles are forgotten, and a reset
// through the cuda plugin (cuDevicePrimaryCtxReset) is announced to the session's other plugins,
// one through the cudart plugin (cudaDeviceReset) heard here. A context of one's own ends by
// cuCtxDestroy: its own handles are forgotten. The allocations made in a context go with it too.
#include <cuda.h>

#include "backend/services/rejections.h"
#include "common/call_marshal.h"
#include "cuda_calls.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/capture_graphs.h"
#include "plugins/cuda/backend/graph_nodes.h"
#include "plugins/cuda/backend/ipc.h"
#include "plugins/cuda/backend/own_contexts.h"
#include "plugins/cuda/backend/textures.h"
#include "plugins/cuda/backend/thread_contexts.h"

namespace gvirtus::cuda {
namespace {

constexpr uint64_t bit(HandleKind kind) {
  return uint64_t{1} << static_cast<uint16_t>(kind);
}

// What a context's end destroys: its modules with their functions, streams, events, executable
// graphs, arrays and mipmapped arrays (their levels with them), and texture and surface objects.
// Other contexts, libraries and their kernels (context-independent), graphs and memory pools are
// not the context's, and stay.
constexpr uint64_t kContextBound = bit(HandleKind::kModule) | bit(HandleKind::kFunction) |
                                   bit(HandleKind::kStream) | bit(HandleKind::kEvent) |
                                   bit(HandleKind::kExecutableGraph) | bit(HandleKind::kArray) |
                                   bit(HandleKind::kMipmappedArray);

}  // namespace

int context_device() {
  CUcontext current = nullptr;
  if (real().cuCtxGetCurrent != nullptr && real().cuCtxGetCurrent(&current) == CUDA_SUCCESS) {
    if (const auto own = own_context_owner(current)) return *own;
  }
  CUdevice device = -1;
  if (real().cuCtxGetDevice == nullptr || real().cuCtxGetDevice(&device) != CUDA_SUCCESS) return -1;
  return device;
}

// Also what a failure sent ahead left pending on this thread (backend/services/rejections.h):
// the reset context took it along.
void forget_device(int device) {
  services::session_services().handles.forget_owned(device, kContextBound);
  services::session_services().allocations.context_gone(device);
  capture_graphs().forget_all();  // the captures' streams went with the context
  forget_textures(device);
  forget_ipc();
  services::drop_ahead_failure();
}

// A primary context goes by a reset, or by the release of its last reference (the driver then
// destroys it as a reset does): either way the session forgets what it held, and tells its other
// plugins.
void after_call(Fn fn, WireReader request, CUresult result) {
  note_thread_context();  // whatever the call did to it
  if (fn == Fn::cuGraphInstantiateWithFlags && result == CUDA_SUCCESS) {
    (void)marshal::Output<CUgraphExec>(request);  // the executable graph's place, then the graph
    note_instantiated(marshal::get_value<CUgraph>(request));
  }
  if (fn == Fn::cuStreamEndCapture) {
    capture_graphs().ended(result == CUDA_SUCCESS);
  }
  if (fn == Fn::cuCtxDestroy_v2 && result == CUDA_SUCCESS) {
    if (const auto owner = forget_own_context(marshal::get_value<CUcontext>(request))) {
      services::session_services().handles.forget_owned(*owner, kContextBound);
      services::session_services().allocations.context_gone(*owner);
      forget_textures(*owner);
    }
    services::drop_ahead_failure();
  }
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

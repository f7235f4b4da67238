// libgvirtus-plugin-cudart.so: executes remoted CUDA runtime calls on NVIDIA's real runtime.
//
// Loaded by the daemon (which never calls into CUDA); each session's calls run in its worker
// process after fork(), where the runtime initialises lazily on the first call. Without a driver
// or a device the runtime's own errors (cudaErrorInsufficientDriver, cudaErrorNoDevice) go back to
// the application unchanged, exactly as a native run would see them.
#include "backend/plugin.h"
#include "backend/plugin_export.h"
#include "backend/services/client_threads.h"
#include "backend/services/host_gates.h"
#include "plugins/cudart/backend/arrays.h"
#include "plugins/cudart/backend/capture_graphs.h"
#include "plugins/cudart/backend/graph_nodes.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/ipc.h"
#include "plugins/cudart/backend/modules.h"
#include "plugins/cudart/backend/shared_host_memory.h"
#include "plugins/cudart/backend/textures.h"
#include "plugins/cudart/backend/user_objects.h"
#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {
namespace {

constexpr uint64_t bit(HandleKind kind) {
  return uint64_t{1} << static_cast<uint16_t>(kind);
}

// A reset of `device` destroyed its streams, events, executable graphs, arrays and texture and
// surface objects, freed the memory allocated there, and unmapped the IPC memory opened there;
// pools are forgotten whatever their device (the client asks for them again). Graphs are no
// context's (the runtime's cudaGraph_t outlives a reset, as the driver's CUgraph does), and stay.
void forget_device(int device) {
  auto& handles = services::session_services().handles;
  handles.forget_owned(device, ~bit(HandleKind::kGraph));
  services::session_services().allocations.context_gone(device);  // freed by the reset
  // The pools of every owner (kNotHeld is no owner: handles belong to a device or to -1).
  handles.forget_owner(services::HandleTable::kNotHeld, bit(HandleKind::kMemoryPool));
  forget_array_children();
  forget_textures(device);
  forget_ipc();
  capture_graphs().forget_all();  // the captures' streams went with the context
}

void set_device(int device) {
  cudaSetDevice(device);
}

// The runtime's current device is a host thread's: it follows its client thread from backend
// thread to backend thread (backend/services/client_threads.h). Noted after each cudaSetDevice,
// the one call that changes it, so no other call pays for it.
services::ClientThreads<int>& thread_devices() {
  static auto& threads = *new services::ClientThreads<int>(set_device, 0);
  return threads;
}

class CudartSession final : public PluginSession {
 public:
  void handle(Call& call) override {
    const auto fn = static_cast<Fn>(call_function(call.header.call_id));
    thread_devices().before_call(call.header.thread_id);
    const cudaError_t result = services::run_call(
        name_of(fn), last_error_role(fn), cudaSuccess, call.reply, [&](cudaError_t& r) {
          if (!run_generated(fn, call.args, call.reply, r) &&
              !run_custom(fn, call.args, call.reply, r)) {
            raise(ErrorKind::kUnimplemented,
                  "cudart call " + std::to_string(call_function(call.header.call_id)) +
                      " is not served by this backend");
          }
        });
    if (fn == Fn::cudaSetDevice && result == cudaSuccess) thread_devices().note(current_device());
    if (fn == Fn::cudaStreamEndCapture) capture_graphs().ended(result == cudaSuccess);
    // cudaDeviceReset destroyed the device's primary context: this plugin forgets what it held
    // there, and the session's other plugins (the driver's) what they did.
    if (fn == Fn::cudaDeviceReset && result == cudaSuccess) {
      const int device = current_device();
      forget_device(device);
      services::session_services().peer_device_reset(device);
    }
    // An asynchronous call's failure needs no reply: the real runtime has recorded it, and the
    // application's next cudaGetLastError or synchronising call reports it, as natively.
  }
};

}  // namespace

class CudartPlugin final : public BackendPlugin {
 public:
  PluginIdentity identity() const override { return kIdentity; }
  bool quiet(uint16_t function) const override { return is_quiet(static_cast<Fn>(function)); }
  std::unique_ptr<PluginSession> open_session(const SessionInfo& session) override {
    set_shared_memory(session.shared_memory);  // one session per worker process
    thread_devices().reset();
    services::session_services().reset(session.device_bytes, session.registry, kKindNames,
                                       forget_device);
    forget_modules();
    forget_all_nodes();
    forget_conditional_handles();
    services::host_gates().open(session.client_gone);
    forget_all_user_objects();
    return std::make_unique<CudartSession>();
  }
};

}  // namespace gvirtus::cudart

GVIRTUS_EXPORT_BACKEND_PLUGIN(gvirtus::cudart::CudartPlugin)

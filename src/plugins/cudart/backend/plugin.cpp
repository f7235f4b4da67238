// libgvirtus-plugin-cudart.so: executes remoted CUDA runtime calls on NVIDIA's real runtime.
//
// Loaded by the daemon (which never calls into CUDA); each session's calls run in its worker
// process after fork(), where the runtime initialises lazily on the first call. Without a driver
// or a device the runtime's own errors (cudaErrorInsufficientDriver, cudaErrorNoDevice) go back to
// the application unchanged, exactly as a native run would see them.
#include "backend/plugin.h"
#include "plugins/cudart/backend/handlers.h"

#include <unordered_map>

namespace gvirtus::cudart {
namespace {

class CudartSession final : public PluginSession {
 public:
  void handle(Call& call) override {
    const auto fn = static_cast<Fn>(call_function(call.header.call_id));
    follow_thread(call.header.thread_id);
    cudaError_t result = cudaSuccess;
    if (!run_generated(fn, call.args, call.reply, result) &&
        !run_custom(fn, call.args, call.reply, result)) {
      raise(ErrorKind::kUnimplemented, "cudart call " +
                                           std::to_string(call_function(call.header.call_id)) +
                                           " is not served by this backend");
    }
    // An asynchronous call's failure needs no reply: the real runtime has recorded it, and the
    // application's next cudaGetLastError or synchronising call reports it, as natively.
    if (fn == Fn::cudaSetDevice && result == cudaSuccess) {
      int device = 0;
      if (::cudaGetDevice(&device) == cudaSuccess) {
        devices_[call.header.thread_id] = device;
        current_device_ = device;
      }
    }
  }

 private:
  // The current device is per host thread in CUDA. The worker runs every client thread's calls
  // on its one thread, in arrival order (which keeps each client thread's order), so before a
  // call it makes the calling client thread's device current. A thread that never chose a device
  // uses device 0, as natively; nothing is switched until some thread chooses another one.
  void follow_thread(uint32_t thread_id) {
    const auto it = devices_.find(thread_id);
    const int wanted = it != devices_.end() ? it->second : 0;
    if (wanted != current_device_ && ::cudaSetDevice(wanted) == cudaSuccess) {
      current_device_ = wanted;
    }
  }

  std::unordered_map<uint32_t, int> devices_;  // client thread id -> its current device
  int current_device_ = 0;
};

class CudartPlugin final : public BackendPlugin {
 public:
  PluginIdentity identity() const override { return kIdentity; }
  std::unique_ptr<PluginSession> open_session(const SessionInfo&) override {
    return std::make_unique<CudartSession>();
  }
};

}  // namespace
}  // namespace gvirtus::cudart

extern "C" __attribute__((visibility("default"))) gvirtus::BackendPlugin* gvirtus_backend_plugin() {
  static gvirtus::cudart::CudartPlugin plugin;
  return &plugin;
}

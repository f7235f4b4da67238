// libgvirtus-plugin-cudart.so: executes remoted CUDA runtime calls on NVIDIA's real runtime.
//
// Loaded by the daemon (which never calls into CUDA); each session's calls run in its worker
// process after fork(), where the runtime initialises lazily on the first call. Without a driver
// or a device the runtime's own errors (cudaErrorInsufficientDriver, cudaErrorNoDevice) go back to
// the application unchanged, exactly as a native run would see them.
#include "backend/plugin.h"
#include "backend/plugin_export.h"
#include "plugins/cudart/backend/allocation_ledger.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/modules.h"
#include "plugins/cudart/backend/shared_host_memory.h"
#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {
namespace {

class CudartSession final : public PluginSession {
 public:
  explicit CudartSession(std::atomic<uint64_t>* device_bytes) : allocations_(device_bytes) {}

  void handle(Call& call) override {
    const auto fn = static_cast<Fn>(call_function(call.header.call_id));
    const WireReader request = call.args;  // a copy before decoding, for the ledger
    cudaError_t result = cudaSuccess;
    begin_vetted_call();
    if (!run_generated(fn, call.args, call.reply, result) &&
        !run_custom(fn, call.args, call.reply, result)) {
      raise(ErrorKind::kUnimplemented, "cudart call " +
                                           std::to_string(call_function(call.header.call_id)) +
                                           " is not served by this backend");
    }
    if (fn == Fn::cudaGetLastError || fn == Fn::cudaPeekAtLastError) {
      // A call the backend rejected is newer than anything the runtime's last error holds.
      const cudaError_t merged = merge_last_error(result, fn == Fn::cudaGetLastError);
      call.reply.store_at<int32_t>(0, merged);
    } else {
      end_vetted_call(result);
    }
    if (fn == Fn::cudaDeviceReset && result == cudaSuccess) {
      int device = -1;
      if (::cudaGetDevice(&device) == cudaSuccess) session_handles().forget_device(device);
    }
    // An asynchronous call's failure needs no reply: the real runtime has recorded it, and the
    // application's next cudaGetLastError or synchronising call reports it, as natively.
    if (result == cudaSuccess && affects_device_memory(fn)) {
      allocations_.apply(memory_effect(fn, request, call.reply.view()));
    }
  }

 private:
  AllocationLedger allocations_;  // what gvirtus-smi shows as the session's allocated memory
};

}  // namespace

class CudartPlugin final : public BackendPlugin {
 public:
  PluginIdentity identity() const override { return kIdentity; }
  std::unique_ptr<PluginSession> open_session(const SessionInfo& session) override {
    set_shared_memory(session.shared_memory);  // one session per worker process
    session_handles().clear();
    forget_modules();
    return std::make_unique<CudartSession>(session.device_bytes);
  }
};

}  // namespace gvirtus::cudart

GVIRTUS_EXPORT_BACKEND_PLUGIN(gvirtus::cudart::CudartPlugin)

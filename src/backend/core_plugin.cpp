#include "backend/core_plugin.h"

#include <unistd.h>

#include <chrono>
#include <thread>

#include "backend/gpu_inventory.h"
#include "backend/session_table.h"
#include "protocol/core_calls.h"
#include "protocol/status.h"

namespace gvirtus {
namespace {

// The backend's GPUs and every other session (not the one asking). Runs in the asking session's
// worker, which has no CUDA context: GPU figures come from NVML.
BackendStatus backend_status() {
  BackendStatus status;
  status.backend_version = "gvirtus-backend " GVIRTUS_VERSION;
  GpuInventory gpus = read_gpu_inventory();
  status.gpu_error = std::move(gpus.error);
  status.gpus = std::move(gpus.gpus);
  const SessionTable* table = current_session_table();
  if (table == nullptr) {
    status.daemon_pid = static_cast<uint32_t>(::getppid());
    return status;  // a session run outside a daemon (tests): no other sessions to show
  }
  status.daemon_pid = static_cast<uint32_t>(table->daemon_pid());
  status.started_unix_s = table->started_unix_s();
  status.max_sessions = table->max_sessions();
  for (SessionStatus& s : table->snapshot()) {
    if (s.worker_pid == static_cast<uint32_t>(::getpid())) continue;
    if (const auto it = gpus.memory_by_pid.find(static_cast<pid_t>(s.worker_pid));
        it != gpus.memory_by_pid.end()) {
      s.device_memory_bytes = it->second;
    } else if (status.gpu_error.empty()) {
      s.device_memory_bytes = 0;  // NVML works and lists no memory for this worker
    }
    status.sessions.push_back(std::move(s));
  }
  return status;
}

class CoreSession final : public PluginSession {
 public:
  void handle(Call& call) override {
    switch (static_cast<core::Fn>(call_function(call.header.call_id))) {
      case core::Fn::kPing: {
        const auto payload = call.args.get_raw(call.args.remaining());
        call.reply.put_raw(payload.data(), payload.size());
        return;
      }
      case core::Fn::kSink:
        return;
      case core::Fn::kWait: {
        const uint32_t ms = call.args.get<uint32_t>();
        call.args.expect_end();
        if (ms > core::kMaxWaitMs) raise(ErrorKind::kInvalidInput, "wait of more than 10 s");
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        return;
      }
      case core::Fn::kStatus:
        call.args.expect_end();
        encode(backend_status(), call.reply);
        return;
      case core::Fn::kHello:
        raise(ErrorKind::kInvalidInput, "hello sent twice in one session");
      case core::Fn::kAuthenticate:
        raise(ErrorKind::kInvalidInput, "authenticate sent outside the handshake");
      case core::Fn::kOpenPlugin:  // the session serves it (it owns the plugin sessions)
        raise(ErrorKind::kFailed, "OpenPlugin reached the core plugin");
      default:
        raise(ErrorKind::kUnimplemented,
              "core call " + std::to_string(call_function(call.header.call_id)) + " is unknown");
    }
  }
};

class CorePlugin final : public BackendPlugin {
 public:
  PluginIdentity identity() const override { return core::kIdentity; }
  std::unique_ptr<PluginSession> open_session(const SessionInfo&) override {
    return std::make_unique<CoreSession>();
  }
};

}  // namespace

BackendPlugin* core_plugin() {
  static CorePlugin plugin;
  return &plugin;
}

}  // namespace gvirtus

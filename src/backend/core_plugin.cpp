#include "backend/core_plugin.h"

#include <unistd.h>

#include <chrono>
#include <thread>

#include "backend/backend_status.h"
#include "backend/session_table.h"
#include "protocol/core_calls.h"
#include "protocol/status.h"

namespace gvirtus {
namespace {

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
        mark_current_session_monitor();
        encode(read_backend_status(::getpid()), call.reply);  // every other session
        return;
      case core::Fn::kHello:
        raise(ErrorKind::kInvalidInput, "hello sent twice in one session");
      case core::Fn::kAuthenticate:
        raise(ErrorKind::kInvalidInput, "authenticate sent outside the handshake");
      case core::Fn::kOpenPlugin:  // the session serves it (it owns the plugin sessions)
        raise(ErrorKind::kFailed, "OpenPlugin reached the core plugin");
      case core::Fn::kOutput:
        raise(ErrorKind::kInvalidInput, "a client sent an output frame, which only backends send");
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

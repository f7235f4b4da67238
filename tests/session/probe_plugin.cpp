// The backend side of the probe plugin (probe_calls.h): libgvirtus-plugin-probe.so.
#include <unistd.h>

#include <memory>

#include "backend/plugin.h"
#include "backend/plugin_export.h"
#include "common/error.h"
#include "session/probe_calls.h"

namespace gvirtus::probe {
namespace {

class ProbeSession final : public PluginSession {
 public:
  void handle(Call& call) override {
    switch (static_cast<Fn>(call_function(call.header.call_id))) {
      case Fn::kWorkerPid:
        call.args.expect_end();
        call.reply.put<uint32_t>(static_cast<uint32_t>(::getpid()));
        return;
      case Fn::kEcho: {
        const auto payload = call.args.get_raw(call.args.remaining());
        call.reply.put_raw(payload.data(), payload.size());
        return;
      }
      default:
        raise(ErrorKind::kUnimplemented,
              "probe call " + std::to_string(call_function(call.header.call_id)) + " is unknown");
    }
  }
};

}  // namespace

class ProbePlugin final : public BackendPlugin {
 public:
  PluginIdentity identity() const override { return kIdentity; }
  std::unique_ptr<PluginSession> open_session(const SessionInfo&) override {
    return std::make_unique<ProbeSession>();
  }
};

}  // namespace gvirtus::probe

GVIRTUS_EXPORT_BACKEND_PLUGIN(gvirtus::probe::ProbePlugin)

// The backend side of the probe plugin (probe_calls.h): libgvirtus-plugin-probe.so.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <span>

#include "backend/plugin.h"
#include "backend/plugin_export.h"
#include "common/error.h"
#include "session/probe_calls.h"

namespace gvirtus::probe {
namespace {

class ProbeSession final : public PluginSession {
  static void print(uint8_t stream, bool unflushed, std::span<const std::byte> bytes) {
    if (stream != 1 && stream != 2) raise(ErrorKind::kFailed, "no such stream");
    if (unflushed) {
      std::fwrite(bytes.data(), 1, bytes.size(), stream == 1 ? stdout : stderr);
      return;
    }
    while (!bytes.empty()) {
      const ssize_t n = ::write(stream, bytes.data(), bytes.size());
      if (n <= 0) raise(ErrorKind::kFailed, "write failed");
      bytes = bytes.subspan(static_cast<size_t>(n));
    }
  }

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
      case Fn::kPrint: {
        const auto stream = call.args.get<uint8_t>();
        const bool unflushed = call.args.get<uint8_t>() != 0;
        print(stream, unflushed, call.args.get_raw(call.args.remaining()));
        return;
      }
      case Fn::kPrintAhead: {
        const auto stream = call.args.get<uint8_t>();
        print(stream, false, call.args.get_raw(call.args.remaining()));
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

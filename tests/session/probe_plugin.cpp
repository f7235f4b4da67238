// The backend side of the probe plugin (probe_calls.h): libgvirtus-plugin-probe.so. Built with
// -DPROBE_FIRST_TABLE (libgvirtus-plugin-probe-first.so), it exports the plugin table as a plugin
// built for the table's first version had it: ending at close_session, so that the backend must
// not read the fields added since.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
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
      case Fn::kQuiet:
        call.args.expect_end();
        return;
      case Fn::kPrint:
      case Fn::kPrintQuiet: {
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
  bool quiet(uint16_t function) const override {
    return function == static_cast<uint16_t>(Fn::kQuiet) ||
           function == static_cast<uint16_t>(Fn::kPrintQuiet);
  }
  std::unique_ptr<PluginSession> open_session(const SessionInfo&) override {
    return std::make_unique<ProbeSession>();
  }
};

}  // namespace gvirtus::probe

#ifndef PROBE_FIRST_TABLE
GVIRTUS_EXPORT_BACKEND_PLUGIN(gvirtus::probe::ProbePlugin)
#else
namespace {
// Where the first table ends, this one does not: a backend reading past struct_size would call
// this and end the worker.
int read_past_the_table(uint16_t) {
  std::abort();
}
}  // namespace

extern "C" __attribute__((visibility("default"))) const gvirtus_plugin_table_v1*
gvirtus_backend_plugin_v1() {
  static const gvirtus_plugin_table_v1 table = [] {
    gvirtus_plugin_table_v1 first =
        *gvirtus::plugin_export::Adapter<gvirtus::probe::ProbePlugin>::table();
    first.struct_size = GVIRTUS_PLUGIN_TABLE_V1_MIN_SIZE;
    first.quiet = &read_past_the_table;
    return first;
  }();
  return &table;
}
#endif

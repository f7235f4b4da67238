// gvirtus-smi: what each configured backend is doing — its GPUs (name, memory, utilisation) and
// its client sessions (address, transport, program, calls, traffic, GPU memory held).
//
//   gvirtus-smi [--config FILE] [--json] [--timeout MS]
//
// Every endpoint of the configuration is asked in turn through a status query (a session that
// opens no CUDA plugin, so the backend creates no CUDA context for it). Exit status: 0 when every
// backend answered, 1 when one could not be reached or asked, 2 for a usage error.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "protocol/status.h"
#include "smi/smi_report.h"

namespace {

constexpr const char* kUsage = "usage: gvirtus-smi [--config FILE] [--json] [--timeout MS]\n";
constexpr uint32_t kStatusReplyTimeoutMs = 10000;

int usage(const std::string& why) {
  std::cerr << "gvirtus-smi: " << why << "\n" << kUsage;
  return 2;
}

// "tcp 127.0.0.1:9999" for an address-and-port endpoint, else its place in the file.
std::string endpoint_label(const gvirtus::EndpointConfig& endpoint) {
  std::string label = endpoint.protocol().empty() ? endpoint.suite() : endpoint.protocol();
  try {
    const std::string address = endpoint.string_or("server_address", "");
    if (!address.empty()) {
      return label + " " + address + ":" + std::to_string(endpoint.uint_or("port", 0));
    }
  } catch (const gvirtus::Error&) {
    // A malformed address is reported by the connect attempt; fall back to the position.
  }
  return label + " (" + endpoint.where() + ")";
}

uint64_t unix_now_s() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Asks one endpoint.
gvirtus::smi::BackendResult ask(const gvirtus::Config& config,
                                const gvirtus::EndpointConfig& endpoint) {
  gvirtus::smi::BackendResult result;
  result.endpoint = endpoint_label(endpoint);
  result.pool_backend = endpoint.backend();
  gvirtus::Config one = config;
  one.endpoints = {endpoint};
  try {
    gvirtus::Client client(std::move(one), {});
    gvirtus::BackendStatus status;
    client.call(gvirtus::core::call_id(gvirtus::core::Fn::kStatus), {},
                [&](gvirtus::WireReader& in) { status = gvirtus::decode_backend_status(in); });
    result.status = std::move(status);
  } catch (const gvirtus::Error& e) {
    result.why = e.what();
    if (e.kind() == gvirtus::ErrorKind::kUnimplemented) {
      result.why += " (the backend predates status queries: upgrade it)";
    }
    // Connection failures are kDisconnected or kTimedOut; anything else is the backend's answer.
    const bool reached =
        e.kind() != gvirtus::ErrorKind::kDisconnected && e.kind() != gvirtus::ErrorKind::kTimedOut;
    result.state = reached ? "REFUSED" : "UNREACHABLE";
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  gvirtus::set_log_program("gvirtus-smi");
  std::string config_path;
  bool json = false;
  uint32_t timeout_ms = 0;  // 0: the configuration's connect bound, kStatusReplyTimeoutMs
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout
          << kUsage
          << "Shows each configured gvirtus backend's GPUs (name, memory used/total,\n"
             "utilisation) and client sessions (address, transport, program, calls,\n"
             "traffic, GPU memory held).\n"
             "  --config FILE  the properties.json naming the backends. Without it:\n"
             "                 $GVIRTUS_CONFIG, else $GVIRTUS_HOME/etc/gvirtus/properties.json,\n"
             "                 else the installed default.\n"
             "  --json         one JSON document instead (bytes and seconds; unknown\n"
             "                 figures are null).\n"
             "  --timeout MS   bound on connecting to and on hearing from each backend\n"
             "                 (default: connect_timeout_ms of the configuration, and 10 s\n"
             "                 for the answer).\n"
             "Exit status: 0 all backends answered, 1 one could not be asked, 2 usage.\n";
      return 0;
    }
    if (arg == "--json") {
      json = true;
    } else if (arg == "--timeout" && i + 1 < argc) {
      char* end = nullptr;
      const unsigned long ms = std::strtoul(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0' || ms == 0 || ms > 3600000) {
        return usage("--timeout wants milliseconds, 1 to 3600000");
      }
      timeout_ms = static_cast<uint32_t>(ms);
    } else if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      config_path = arg.substr(9);
    } else {
      return usage("unknown argument \"" + arg + "\"");
    }
  }
  gvirtus::Config config;
  std::filesystem::path path;
  try {
    path = config_path.empty() ? gvirtus::find_config() : std::filesystem::path(config_path);
    config = gvirtus::load_config(path);
  } catch (const gvirtus::Error& e) {
    std::cerr << "gvirtus-smi: " << e.what() << "\n";
    return 1;
  }
  // A status query must not hang on a backend that accepts but never answers (NVML can block on
  // a GPU in a bad state): both the connect and the reply are bounded.
  if (timeout_ms != 0) config.connect_timeout_ms = timeout_ms;
  config.reply_timeout_ms = timeout_ms != 0 ? timeout_ms : kStatusReplyTimeoutMs;
  std::vector<gvirtus::smi::BackendResult> results;
  bool all_answered = true;
  for (const gvirtus::EndpointConfig& endpoint : config.endpoints) {
    results.push_back(ask(config, endpoint));
    all_answered = all_answered && results.back().status.has_value();
  }
  gvirtus::smi::assign_pool_devices(results);
  if (json) {
    std::cout << gvirtus::smi::format_json(path.string(), results);
    return all_answered ? 0 : 1;
  }
  std::cout << "gvirtus-smi: configuration " << path.string() << ", ";
  if (config.endpoints.front().backend().empty()) {
    std::cout << config.endpoints.size()
              << (config.endpoints.size() == 1 ? " backend" : " backends");
  } else {  // a client's pool: its backends, each with its endpoints
    const size_t pool_size = gvirtus::pool_members(config).size();
    std::cout << "a pool of " << pool_size << (pool_size == 1 ? " backend" : " backends") << " ("
              << config.endpoints.size()
              << (config.endpoints.size() == 1 ? " endpoint)" : " endpoints)");
  }
  std::cout << "\n";
  for (const auto& r : results) {
    std::cout << "\n"
              << (r.status ? gvirtus::smi::format_backend(r.endpoint, *r.status, unix_now_s(),
                                                          gvirtus::smi::pool_line(r))
                           : gvirtus::smi::format_unreachable(r.endpoint, r.state, r.why));
  }
  return all_answered ? 0 : 1;
}

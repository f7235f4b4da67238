// properties.json: the configuration of a backend and of its clients.
//
// The format is GVirtuS's, so existing users can switch:
//   { "communicator": [ { "endpoint": { "suite": "tcp/ip", "protocol": "tcp",
//                                       "server_address": "127.0.0.1", "port": "9999" },
//                         "plugins": ["cudart"] } ],
//     "secure_application": false }
// plus optional keys of ours (all documented in docs/configuration.md). The loader checks the
// structure and the common keys; each communicator reads its own endpoint fields through the
// EndpointConfig accessors, so every error names the file, the field and what was expected:
//   "/etc/gvirtus/properties.json: communicator[0].endpoint.port: expected a port number
//    (0-65535) as a string or an integer, got true"
// Errors are gvirtus::Error{kInvalidInput} exceptions carrying that message.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace gvirtus {

// One entry of the "communicator" array.
class EndpointConfig {
 public:
  EndpointConfig(std::string source, std::string field_path, JsonValue endpoint,
                 std::vector<std::string> plugins, std::string backend = {});

  const std::string& suite() const { return suite_; }        // "tcp/ip", "shm", ...
  const std::string& protocol() const { return protocol_; }  // "tcp", "shm", ...
  const std::vector<std::string>& plugins() const { return plugins_; }
  // "backend": the pool member this endpoint reaches (a client's pool, frontend/pool.h); empty
  // when the configuration names none (every endpoint then reaches the one backend).
  const std::string& backend() const { return backend_; }

  // Accessors for a communicator's own fields of the "endpoint" object. Each throws
  // Error{kInvalidInput} naming "<file>: <field path>.<key>" and what was expected.
  std::string require_string(std::string_view key) const;
  std::string string_or(std::string_view key, std::string_view fallback) const;
  // A port given as "9999" or 9999 (GVirtuS writes strings); 0 means "any free port".
  uint16_t require_port(std::string_view key) const;
  // A non-negative integer given as a number or a decimal string.
  uint64_t uint_or(std::string_view key, uint64_t fallback) const;
  bool bool_or(std::string_view key, bool fallback) const;

  // "<file>: communicator[i].endpoint", the prefix of every message about this endpoint.
  std::string where() const;
  // Throws Error{kInvalidInput}: "<where>.<key>: <what>". For checks a communicator makes itself.
  [[noreturn]] void fail(std::string_view key, std::string_view what) const;

  const JsonValue& fields() const { return endpoint_; }

 private:
  std::string source_;
  std::string field_path_;
  JsonValue endpoint_;
  std::string suite_;
  std::string protocol_;
  std::vector<std::string> plugins_;
  std::string backend_;
};

// Bounds the backend enforces; every one has a default that suits one machine.
struct Limits {
  uint32_t max_sessions = 64;                       // "max_sessions"
  uint64_t max_frame_bytes = uint64_t{256} << 20;   // "max_frame_bytes"
  uint64_t max_inflight_bytes = uint64_t{1} << 30;  // "max_inflight_bytes" per session
  uint32_t idle_timeout_s = 0;                      // "idle_timeout_s"; 0 = never
};

// The backend's module cache (backend/services/module_cache.h), "module_cache": { ... }.
struct ModuleCacheConfig {
  // "path": the directory, relative to the config's directory when not absolute. Empty: the
  // default place (backend/module_cache_place.h), which the daemon finds when it starts.
  std::string path;
  // "max_bytes": the bound on its entries' total size; 0 turns the cache off.
  uint64_t max_bytes = uint64_t{8} << 30;
};

// The backend's Prometheus endpoint (backend/metrics_server.h), "metrics": { ... }.
struct MetricsConfig {
  // "listen": where /metrics is served, "ADDRESS:PORT" ("[ADDRESS]:PORT" for IPv6; port 0 takes
  // a free one, which the backend logs). Empty (the default): no metrics endpoint.
  std::string listen;
};

// Where what the backend's worker prints while serving a session goes (the device's printf and
// assertion messages above all; backend/output_relay.h), "device_output".
enum class DeviceOutput {
  kRelay,    // "relay": to the application's stdout and stderr, as natively (the default)
  kBackend,  // "backend": to the backend's own stdout and stderr
};

struct Config {
  std::string source;  // the file it came from, or "<string>"
  std::vector<EndpointConfig> endpoints;
  bool secure_application = false;         // "secure_application"
  std::optional<std::string> secret_file;  // "secret_file", relative to the config's directory
  uint32_t connect_timeout_ms = 5000;      // "connect_timeout_ms": bound on a client's connect
  uint32_t reply_timeout_ms = 0;           // "reply_timeout_ms": bound on a sync reply; 0 = none
  // "async_batch_us": how long a client may hold asynchronous calls to send several at once
  // (frontend/async_batch.h); 0 sends each at once.
  uint32_t async_batch_us = 20;
  // "visible_devices": the backend's GPUs the client's applications see, as CUDA_VISIBLE_DEVICES
  // ("2,0"; common/device_selection.h), normalised; empty: all. GVIRTUS_VISIBLE_DEVICES, when
  // set, replaces it (effective_visible_devices).
  std::string visible_devices;
  Limits limits;                                      // "limits": { ... }
  ModuleCacheConfig module_cache;                     // "module_cache": { ... } (backend)
  MetricsConfig metrics;                              // "metrics": { ... } (backend)
  DeviceOutput device_output = DeviceOutput::kRelay;  // "device_output" (backend)
};

// The device selection a client sends: GVIRTUS_VISIBLE_DEVICES when set and not empty, else
// config.visible_devices; normalised ("2,0"), empty for every device. Throws Error naming the
// variable when it is malformed.
std::string effective_visible_devices(const Config& config);

// A client's pool (frontend/pool.h): one configuration per backend, in the order the backends
// first appear in "communicator", each with that backend's endpoints only (alternatives, as for
// one backend) and every other key as given. A configuration that names no "backend" is one
// member, itself, unchanged.
struct PoolMember {
  std::string name;  // the endpoints' "backend"; empty for a configuration that names none
  Config config;
};
std::vector<PoolMember> pool_members(const Config& config);

// Parses a whole properties.json text; `source` names it in messages.
Config parse_config(std::string_view text, const std::string& source);

// Reads and parses a file; an unreadable file is an error naming it.
Config load_config(const std::filesystem::path& path);

// Where the configuration is: $GVIRTUS_CONFIG, else $GVIRTUS_HOME/etc/properties.json, else the
// installed default (<prefix>/etc/gvirtus/properties.json, compiled in). A variable that is set
// but names a missing file is an error, never a silent fallback.
std::filesystem::path find_config();

}  // namespace gvirtus

#include "common/config.h"

#include "common/paths.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <system_error>
#include <utility>

#include "common/device_selection.h"
#include "common/error.h"

#ifndef GVIRTUS_INSTALL_SYSCONFDIR
#define GVIRTUS_INSTALL_SYSCONFDIR "/usr/local/etc/gvirtus"
#endif

namespace gvirtus {

namespace {

// A configuration file is a few hundred bytes; anything this big is the wrong file (or /dev/zero).
constexpr size_t kMaxConfigBytes = size_t{16} << 20;
constexpr uint64_t kMinFrameBytes = 4096;
constexpr uint64_t kMaxFrameBytes = (uint64_t{4} << 30) - 1;
constexpr uint64_t kMaxUint32 = std::numeric_limits<uint32_t>::max();

constexpr std::string_view kPortExpected = "a port number (0-65535) as a string or an integer";
constexpr std::string_view kUintExpected = "a non-negative integer (a number or a decimal string)";

[[noreturn]] void fail_expected(const std::string& source, const std::string& path,
                                std::string_view expected, const JsonValue& got) {
  raise(ErrorKind::kInvalidInput,
        source + ": " + path + ": expected " + std::string(expected) + ", got " + got.describe());
}

[[noreturn]] void fail_missing(const std::string& where, std::string_view key,
                               std::string_view expected) {
  raise(ErrorKind::kInvalidInput, where + ": missing required field \"" + std::string(key) +
                                      "\" (expected " + std::string(expected) + ")");
}

// A non-negative integer written as a JSON integer or, as GVirtuS does for ports, as a string of
// decimal digits. Fractions, exponents, signs and empty strings are not integers here.
std::optional<uint64_t> to_uint(const JsonValue& v) {
  if (v.is_number()) return v.as_uint64();
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.as_string();
  uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || s[0] == '+' || ec != std::errc() || ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return value;
}

uint64_t require_uint_in(const JsonValue& v, const std::string& source, const std::string& path,
                         uint64_t min, uint64_t max) {
  const std::optional<uint64_t> value = to_uint(v);
  if (!value || *value < min || *value > max) {
    fail_expected(source, path,
                  "an integer from " + std::to_string(min) + " to " + std::to_string(max), v);
  }
  return *value;
}

// Keys starting with "_" or "comment" let users annotate a file that JSON gives no comments to.
bool is_comment_key(std::string_view key) {
  return key.starts_with("_") || key.starts_with("comment");
}

// Unknown keys are typos until proven otherwise: a misspelt "secure_aplication" must not silently
// leave security off.
void reject_unknown_keys(const JsonValue& object, const std::string& source,
                         const std::string& prefix, std::initializer_list<std::string_view> known) {
  for (size_t i = 0; i < object.size(); ++i) {
    const std::string& key = object.key(i);
    bool ok = is_comment_key(key);
    for (std::string_view k : known) ok = ok || key == k;
    if (ok) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    raise(ErrorKind::kInvalidInput, source + ": " + prefix + key +
                                        ": unknown field (expected one of " + list +
                                        "; keys starting with \"_\" or \"comment\" are comments)");
  }
}

std::vector<std::string> parse_plugins(const JsonValue* plugins, const std::string& source,
                                       const std::string& path) {
  std::vector<std::string> names;
  if (plugins == nullptr) return names;
  if (!plugins->is_array()) fail_expected(source, path, "an array of plugin names", *plugins);
  for (size_t i = 0; i < plugins->size(); ++i) {
    const JsonValue& name = plugins->at(i);
    if (!name.is_string() || name.as_string().empty()) {
      fail_expected(source, path + "[" + std::to_string(i) + "]",
                    "a plugin name (a non-empty string)", name);
    }
    names.push_back(name.as_string());
  }
  return names;
}

void parse_module_cache(const JsonValue& cache, const std::string& source, ModuleCacheConfig& out) {
  if (!cache.is_object()) fail_expected(source, "module_cache", "an object", cache);
  reject_unknown_keys(cache, source, "module_cache.", {"path", "max_bytes"});
  if (const JsonValue* v = cache.find("path")) {
    if (!v->is_string() || v->as_string().empty()) {
      fail_expected(source, "module_cache.path", "a directory path (a non-empty string)", *v);
    }
    const std::filesystem::path path(v->as_string());
    out.path = path.is_absolute() ? path.string()
                                  : (std::filesystem::path(source).parent_path() / path).string();
  }
  if (const JsonValue* v = cache.find("max_bytes")) {
    out.max_bytes = require_uint_in(*v, source, "module_cache.max_bytes", 0,
                                    std::numeric_limits<uint64_t>::max());
  }
}

// "ADDRESS:PORT" or "[ADDRESS]:PORT", port 0 to 65535: what civetweb's listening_ports takes,
// checked here so that a mistake stops the backend with the key's name, not civetweb's words.
bool valid_listen_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  const std::string host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  if (std::stoul(port) > 65535) return false;
  if (host.front() == '[') return host.size() > 2 && host.back() == ']';
  return host.find_first_of(":[] ") == std::string::npos;
}

void parse_metrics(const JsonValue& metrics, const std::string& source, MetricsConfig& out) {
  if (!metrics.is_object()) fail_expected(source, "metrics", "an object", metrics);
  reject_unknown_keys(metrics, source, "metrics.", {"listen"});
  if (const JsonValue* v = metrics.find("listen")) {
    if (!v->is_string() || !valid_listen_address(v->as_string())) {
      fail_expected(source, "metrics.listen",
                    "\"ADDRESS:PORT\" (\"[ADDRESS]:PORT\" for IPv6, port 0 to 65535)", *v);
    }
    out.listen = v->as_string();
  }
}

void parse_limits(const JsonValue& limits, const std::string& source, Limits& out) {
  if (!limits.is_object()) fail_expected(source, "limits", "an object", limits);
  reject_unknown_keys(limits, source, "limits.",
                      {"max_sessions", "max_frame_bytes", "max_inflight_bytes", "idle_timeout_s"});
  if (const JsonValue* v = limits.find("max_sessions")) {
    out.max_sessions =
        static_cast<uint32_t>(require_uint_in(*v, source, "limits.max_sessions", 1, kMaxUint32));
  }
  if (const JsonValue* v = limits.find("max_frame_bytes")) {
    out.max_frame_bytes =
        require_uint_in(*v, source, "limits.max_frame_bytes", kMinFrameBytes, kMaxFrameBytes);
  }
  if (const JsonValue* v = limits.find("max_inflight_bytes")) {
    // Below one minimal frame a session could never send anything.
    out.max_inflight_bytes = require_uint_in(*v, source, "limits.max_inflight_bytes",
                                             kMinFrameBytes, std::numeric_limits<uint64_t>::max());
  }
  if (const JsonValue* v = limits.find("idle_timeout_s")) {
    out.idle_timeout_s =
        static_cast<uint32_t>(require_uint_in(*v, source, "limits.idle_timeout_s", 0, kMaxUint32));
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

[[noreturn]] void fail_unreadable(const std::string& name, int err) {
  raise(ErrorKind::kInvalidInput, name + ": cannot read configuration file: " + std::strerror(err));
}

bool env_set(const char* name, std::string& value) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  value = v;
  return true;
}

bool file_exists(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec);
}

}  // namespace

EndpointConfig::EndpointConfig(std::string source, std::string field_path, JsonValue endpoint,
                               std::vector<std::string> plugins, std::string backend)
    : source_(std::move(source)),
      field_path_(std::move(field_path)),
      endpoint_(std::move(endpoint)),
      plugins_(std::move(plugins)),
      backend_(std::move(backend)) {
  if (!endpoint_.is_object()) fail_expected(source_, field_path_, "an object", endpoint_);
  suite_ = require_string("suite");
  protocol_ = require_string("protocol");
}

std::string EndpointConfig::require_string(std::string_view key) const {
  const JsonValue* v = endpoint_.find(key);
  if (v == nullptr) fail_missing(where(), key, "a string");
  if (!v->is_string() || v->as_string().empty()) {
    fail_expected(source_, field_path_ + "." + std::string(key), "a non-empty string", *v);
  }
  return v->as_string();
}

std::string EndpointConfig::string_or(std::string_view key, std::string_view fallback) const {
  const JsonValue* v = endpoint_.find(key);
  if (v == nullptr) return std::string(fallback);
  if (!v->is_string()) fail_expected(source_, field_path_ + "." + std::string(key), "a string", *v);
  return v->as_string();
}

uint16_t EndpointConfig::require_port(std::string_view key) const {
  const JsonValue* v = endpoint_.find(key);
  if (v == nullptr) fail_missing(where(), key, kPortExpected);
  const std::optional<uint64_t> port = to_uint(*v);
  if (!port || *port > 65535) {
    fail_expected(source_, field_path_ + "." + std::string(key), kPortExpected, *v);
  }
  return static_cast<uint16_t>(*port);
}

uint64_t EndpointConfig::uint_or(std::string_view key, uint64_t fallback) const {
  const JsonValue* v = endpoint_.find(key);
  if (v == nullptr) return fallback;
  const std::optional<uint64_t> value = to_uint(*v);
  if (!value) fail_expected(source_, field_path_ + "." + std::string(key), kUintExpected, *v);
  return *value;
}

bool EndpointConfig::bool_or(std::string_view key, bool fallback) const {
  const JsonValue* v = endpoint_.find(key);
  if (v == nullptr) return fallback;
  if (!v->is_bool()) {
    fail_expected(source_, field_path_ + "." + std::string(key), "true or false", *v);
  }
  return v->as_bool();
}

std::string EndpointConfig::where() const {
  return source_ + ": " + field_path_;
}

void EndpointConfig::fail(std::string_view key, std::string_view what) const {
  raise(ErrorKind::kInvalidInput, where() + "." + std::string(key) + ": " + std::string(what));
}

Config parse_config(std::string_view text, const std::string& source) {
  const JsonValue doc = parse_json(text, source);
  if (!doc.is_object()) fail_expected(source, "top level", "an object", doc);
  reject_unknown_keys(doc, source, "",
                      {"communicator", "secure_application", "secret_file", "connect_timeout_ms",
                       "reply_timeout_ms", "async_batch_us", "visible_devices", "limits",
                       "module_cache", "metrics", "device_output"});
  Config config;
  config.source = source;

  const JsonValue* comms = doc.find("communicator");
  constexpr std::string_view kCommsExpected = "a non-empty array of communicator objects";
  if (comms == nullptr) fail_missing(source, "communicator", kCommsExpected);
  if (!comms->is_array() || comms->size() == 0) {
    fail_expected(source, "communicator", kCommsExpected, *comms);
  }
  for (size_t i = 0; i < comms->size(); ++i) {
    const JsonValue& entry = comms->at(i);
    const std::string path = "communicator[" + std::to_string(i) + "]";
    if (!entry.is_object()) {
      fail_expected(source, path, "an object with \"endpoint\" and \"plugins\"", entry);
    }
    reject_unknown_keys(entry, source, path + ".", {"endpoint", "plugins", "backend"});
    const JsonValue* endpoint = entry.find("endpoint");
    if (endpoint == nullptr) {
      fail_missing(source + ": " + path, "endpoint", "an object with \"suite\" and \"protocol\"");
    }
    std::vector<std::string> plugins =
        parse_plugins(entry.find("plugins"), source, path + ".plugins");
    std::string backend;
    if (const JsonValue* v = entry.find("backend")) {
      if (!v->is_string() || v->as_string().empty()) {
        fail_expected(source, path + ".backend", "a backend's name (a non-empty string)", *v);
      }
      backend = v->as_string();
    }
    // A pool names every backend: an endpoint without one would belong to none of them.
    if (i > 0 && backend.empty() != config.endpoints.front().backend().empty()) {
      raise(ErrorKind::kInvalidInput,
            source + ": " + path + ".backend: " +
                (backend.empty() ? "missing: communicator[0] names its backend, so every entry must"
                                 : "communicator[0] names no backend, so no entry may"));
    }
    config.endpoints.emplace_back(source, path + ".endpoint", *endpoint, std::move(plugins),
                                  std::move(backend));
  }

  if (const JsonValue* v = doc.find("secure_application")) {
    if (!v->is_bool()) fail_expected(source, "secure_application", "true or false", *v);
    config.secure_application = v->as_bool();
  }
  if (const JsonValue* v = doc.find("secret_file")) {
    if (!v->is_string() || v->as_string().empty()) {
      fail_expected(source, "secret_file", "a file path (a non-empty string)", *v);
    }
    // Relative to the configuration file, so a file and its secret can move together.
    const std::filesystem::path secret(v->as_string());
    config.secret_file = secret.is_absolute()
                             ? secret.string()
                             : (std::filesystem::path(source).parent_path() / secret).string();
  }
  if (const JsonValue* v = doc.find("connect_timeout_ms")) {
    config.connect_timeout_ms =
        static_cast<uint32_t>(require_uint_in(*v, source, "connect_timeout_ms", 0, kMaxUint32));
  }
  if (const JsonValue* v = doc.find("async_batch_us")) {
    config.async_batch_us =
        static_cast<uint32_t>(require_uint_in(*v, source, "async_batch_us", 0, 100000));
  }
  if (const JsonValue* v = doc.find("reply_timeout_ms")) {
    config.reply_timeout_ms =
        static_cast<uint32_t>(require_uint_in(*v, source, "reply_timeout_ms", 0, kMaxUint32));
  }
  if (const JsonValue* v = doc.find("visible_devices")) {
    if (!v->is_string()) fail_expected(source, "visible_devices", "a string such as \"0,2\"", *v);
    const auto selection = parse_device_selection(v->as_string(), source + ": visible_devices");
    if (selection) config.visible_devices = format_device_selection(*selection);
  }
  if (const JsonValue* v = doc.find("limits")) parse_limits(*v, source, config.limits);
  if (const JsonValue* v = doc.find("module_cache")) {
    parse_module_cache(*v, source, config.module_cache);
  }
  if (const JsonValue* v = doc.find("metrics")) parse_metrics(*v, source, config.metrics);
  if (const JsonValue* v = doc.find("device_output")) {
    if (!v->is_string() || (v->as_string() != "relay" && v->as_string() != "backend")) {
      fail_expected(source, "device_output", "\"relay\" or \"backend\"", *v);
    }
    config.device_output =
        v->as_string() == "relay" ? DeviceOutput::kRelay : DeviceOutput::kBackend;
  }
  return config;
}

std::string effective_visible_devices(const Config& config) {
  std::string text;
  if (!env_set("GVIRTUS_VISIBLE_DEVICES", text)) return config.visible_devices;
  const auto selection = parse_device_selection(text, "GVIRTUS_VISIBLE_DEVICES");
  return selection ? format_device_selection(*selection) : std::string();
}

std::vector<PoolMember> pool_members(const Config& config) {
  std::vector<PoolMember> members;
  for (const EndpointConfig& endpoint : config.endpoints) {
    auto member = std::find_if(members.begin(), members.end(),
                               [&](const PoolMember& m) { return m.name == endpoint.backend(); });
    if (member == members.end()) {
      Config only = config;
      only.endpoints.clear();
      member = members.insert(members.end(), PoolMember{endpoint.backend(), std::move(only)});
    }
    member->config.endpoints.push_back(endpoint);
  }
  if (members.empty()) members.push_back(PoolMember{{}, config});  // no endpoint: Client says so
  return members;
}

Config load_config(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(name.c_str(), "rb"));
  if (!file) fail_unreadable(name, errno);
  std::string text;
  char buf[8192];
  while (true) {
    const size_t n = std::fread(buf, 1, sizeof buf, file.get());
    text.append(buf, n);
    if (text.size() > kMaxConfigBytes) {
      raise(ErrorKind::kInvalidInput, name + ": larger than " + std::to_string(kMaxConfigBytes) +
                                          " bytes; not a configuration file");
    }
    if (n < sizeof buf) break;
  }
  if (std::ferror(file.get())) fail_unreadable(name, errno);  // e.g. EISDIR for a directory
  return parse_config(text, name);
}

std::filesystem::path find_config() {
  std::string value;
  if (env_set("GVIRTUS_CONFIG", value)) {
    if (!file_exists(value)) {
      raise(ErrorKind::kInvalidInput,
            "GVIRTUS_CONFIG is set to \"" + value + "\", but that file does not exist");
    }
    return value;
  }
  if (env_set("GVIRTUS_HOME", value)) {
    const auto in_home = config_candidates(value);
    for (const auto& p : in_home) {
      if (file_exists(p)) return p;
    }
    raise(ErrorKind::kInvalidInput, "GVIRTUS_HOME is set to \"" + value + "\", but neither " +
                                        in_home.front().string() + " nor " +
                                        in_home.back().string() + " exists");
  }
  // Under the prefix this code runs from (a program's bin/.., the stub's
  // lib/gvirtus/stub/../../..), so an install tree works without GVIRTUS_HOME; then the build
  // tree's source etc/.
  const std::filesystem::path home = gvirtus_home();
  std::vector<std::filesystem::path> candidates = config_candidates(home);
  // Only from a build tree (it has a CMakeCache.txt): an install prefix's parent is not ours.
  if (file_exists(home / "CMakeCache.txt")) {
    candidates.push_back((home / ".." / "etc" / "properties.json").lexically_normal());
  }
  candidates.push_back(std::filesystem::path(GVIRTUS_INSTALL_SYSCONFDIR) / "properties.json");
  std::string looked;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::filesystem::path& p = candidates[i];
    if (file_exists(p)) return p;
    // Near "/" several relative candidates collapse into one; list each place once.
    if (std::find(candidates.begin(), candidates.begin() + i, p) != candidates.begin() + i)
      continue;
    looked += (looked.empty() ? "" : ", ") + p.string();
  }
  raise(ErrorKind::kInvalidInput,
        "no configuration file found: GVIRTUS_CONFIG and GVIRTUS_HOME are not set and none of "
        "these exists: " +
            looked);
}

}  // namespace gvirtus

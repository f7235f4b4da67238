// properties.json: GVirtuS files load, and every mistake gets a message naming the file and the
// field; find_config follows GVIRTUS_CONFIG, then GVIRTUS_HOME, then the installed default.
#include "common/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "common/error.h"
#include "support/scoped_env.h"

namespace gvirtus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kSource[] = "/tmp/x.json";

// The example from config.h and DESIGN.md, as GVirtuS writes it.
constexpr char kGvirtusExample[] = R"({ "communicator": [ { "endpoint": { "suite": "tcp/ip",
    "protocol": "tcp", "server_address": "127.0.0.1", "port": "9999" },
    "plugins": ["cudart"] } ],
  "secure_application": false })";

std::string config_error(std::string_view text) {
  try {
    parse_config(text, kSource);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  ADD_FAILURE() << "parsed without error: " << text;
  return "";
}

// The repository root, found from this file so that no build system has to pass it in.
fs::path source_root() {
  return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

// One endpoint with the given extra fields, e.g. R"("port": true)".
std::string with_endpoint_fields(const std::string& fields) {
  return R"({"communicator": [{"endpoint": {"suite": "tcp/ip", "protocol": "tcp")" +
         (fields.empty() ? "" : ", " + fields) + "}}]}";
}

EndpointConfig endpoint_with(const std::string& fields) {
  return parse_config(with_endpoint_fields(fields), kSource).endpoints.at(0);
}

std::string endpoint_error(const std::string& fields,
                           const std::function<void(const EndpointConfig&)>& use) {
  const EndpointConfig e = endpoint_with(fields);
  try {
    use(e);
  } catch (const Error& err) {
    return err.what();
  }
  ADD_FAILURE() << "no error for " << fields;
  return "";
}

// A temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gvirtus-config-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const fs::path& rel, std::string_view text) const {
    const fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }

 private:
  fs::path path_;
};

using gvirtus::testing::ScopedEnv;

TEST(Config, GvirtusExampleLoads) {
  const Config c = parse_config(kGvirtusExample, kSource);
  EXPECT_EQ(c.source, kSource);
  ASSERT_EQ(c.endpoints.size(), 1u);
  const EndpointConfig& e = c.endpoints[0];
  EXPECT_EQ(e.suite(), "tcp/ip");
  EXPECT_EQ(e.protocol(), "tcp");
  EXPECT_EQ(e.plugins(), std::vector<std::string>{"cudart"});
  EXPECT_EQ(e.require_string("server_address"), "127.0.0.1");
  EXPECT_EQ(e.require_port("port"), 9999);
  EXPECT_EQ(e.where(), "/tmp/x.json: communicator[0].endpoint");
  EXPECT_TRUE(e.fields().is_object());
  EXPECT_FALSE(c.secure_application);
  EXPECT_FALSE(c.secret_file.has_value());
  // Defaults for everything the file leaves out.
  EXPECT_EQ(c.connect_timeout_ms, 5000u);
  EXPECT_EQ(c.reply_timeout_ms, 0u);
  EXPECT_EQ(c.limits.max_sessions, Limits{}.max_sessions);
  EXPECT_EQ(c.limits.max_frame_bytes, Limits{}.max_frame_bytes);
}

TEST(Config, LoadsFromFileAndShippedDefault) {
  TempDir dir;
  const Config c = load_config(dir.write("properties.json", kGvirtusExample));
  EXPECT_EQ(c.source, (dir.path() / "properties.json").string());
  EXPECT_EQ(c.endpoints.at(0).require_port("port"), 9999);

  const Config shipped = load_config(source_root() / "etc/properties.json");
  ASSERT_EQ(shipped.endpoints.size(), 1u);
  EXPECT_EQ(shipped.endpoints[0].suite(), "tcp/ip");
  EXPECT_EQ(shipped.endpoints[0].require_string("server_address"), "127.0.0.1");
  EXPECT_EQ(shipped.endpoints[0].require_port("port"), 9999);
}

TEST(Config, UnreadableFileIsNamed) {
  TempDir dir;
  const fs::path missing = dir.path() / "nope.json";
  try {
    load_config(missing);
    FAIL() << "loaded a missing file";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(missing.string()));
    EXPECT_THAT(e.what(), HasSubstr("No such file or directory"));
  }
  try {
    load_config(dir.path());
    FAIL() << "loaded a directory";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir.path().string()));
  }
}

TEST(Config, MalformedJsonNamesFileAndPosition) {
  TempDir dir;
  const fs::path p = dir.write("bad.json", "{\"communicator\": [\n  {\"endpoint\": }\n]}");
  try {
    load_config(p);
    FAIL() << "loaded malformed JSON";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_THAT(e.what(), HasSubstr(p.string() + ":2:16:"));
    EXPECT_THAT(e.what(), HasSubstr("expected a value, found '}'"));
  }
}

TEST(Config, MissingFieldNamesFileAndField) {
  const std::string msg =
      config_error(R"({"communicator": [{"endpoint": {"protocol": "tcp"}, "plugins": []}]})");
  EXPECT_THAT(msg, HasSubstr("/tmp/x.json"));
  EXPECT_THAT(msg, HasSubstr("communicator[0].endpoint"));
  EXPECT_EQ(msg,
            "/tmp/x.json: communicator[0].endpoint: missing required field \"suite\" "
            "(expected a string)");
  EXPECT_EQ(config_error("{}"),
            "/tmp/x.json: missing required field \"communicator\" (expected "
            "a non-empty array of communicator objects)");
  EXPECT_THAT(config_error(R"({"communicator": [{"plugins": []}]})"),
              HasSubstr("/tmp/x.json: communicator[0]: missing required field \"endpoint\""));
  EXPECT_THAT(endpoint_error("", [](const EndpointConfig& e) { e.require_port("port"); }),
              HasSubstr("/tmp/x.json: communicator[0].endpoint: missing required field \"port\""));
}

TEST(Config, WrongTypeNamesFileFieldAndValue) {
  const std::string msg =
      endpoint_error(R"("port": true)", [](const EndpointConfig& e) { e.require_port("port"); });
  EXPECT_THAT(msg, HasSubstr("/tmp/x.json"));
  EXPECT_THAT(msg, HasSubstr("communicator[0].endpoint.port"));
  EXPECT_EQ(msg,
            "/tmp/x.json: communicator[0].endpoint.port: expected a port number (0-65535) "
            "as a string or an integer, got true");
  EXPECT_EQ(config_error(R"({"communicator": [{"endpoint": {"suite": 3, "protocol": "tcp"}}]})"),
            "/tmp/x.json: communicator[0].endpoint.suite: expected a non-empty string, got 3");
  EXPECT_EQ(config_error(R"({"communicator": {}})"),
            "/tmp/x.json: communicator: expected a non-empty array of communicator objects, got "
            "an empty object");
  EXPECT_EQ(config_error(R"({"communicator": []})"),
            "/tmp/x.json: communicator: expected a non-empty array of communicator objects, got "
            "an empty array");
  EXPECT_EQ(config_error(R"({"communicator": [{"endpoint": {"suite": "a", "protocol": "b"},
                                               "plugins": ["cudart", 7]}]})"),
            "/tmp/x.json: communicator[0].plugins[1]: expected a plugin name (a non-empty "
            "string), got 7");
  EXPECT_EQ(config_error(R"({"communicator": [{"endpoint": "tcp"}]})"),
            "/tmp/x.json: communicator[0].endpoint: expected an object, got \"tcp\"");
  EXPECT_THAT(config_error(with_endpoint_fields("").insert(1, R"("secure_application": "no",)")),
              HasSubstr("/tmp/x.json: secure_application: expected true or false, got \"no\""));
  EXPECT_EQ(config_error("[]"), "/tmp/x.json: top level: expected an object, got an empty array");
}

TEST(Config, DeviceOutputIsRelayedUnlessTheBackendKeepsIt) {
  EXPECT_EQ(parse_config(with_endpoint_fields(""), kSource).device_output, DeviceOutput::kRelay);
  const auto with = [](const std::string& value) {
    return with_endpoint_fields("").insert(1, R"("device_output": )" + value + ",");
  };
  EXPECT_EQ(parse_config(with(R"("backend")"), kSource).device_output, DeviceOutput::kBackend);
  EXPECT_EQ(parse_config(with(R"("relay")"), kSource).device_output, DeviceOutput::kRelay);
  EXPECT_EQ(config_error(with(R"("client")")),
            "/tmp/x.json: device_output: expected \"relay\" or \"backend\", got \"client\"");
  EXPECT_THAT(config_error(with("true")), HasSubstr("device_output: expected"));
}

TEST(Config, SecondEndpointIsIndexed) {
  const std::string text = R"({"communicator": [
      {"endpoint": {"suite": "tcp/ip", "protocol": "tcp"}, "plugins": ["cudart"]},
      {"endpoint": {"suite": "shm"}}]})";
  EXPECT_EQ(config_error(text),
            "/tmp/x.json: communicator[1].endpoint: missing required field "
            "\"protocol\" (expected a string)");
}

TEST(Config, PortForms) {
  const auto port = [](const std::string& value) {
    return endpoint_with("\"port\": " + value).require_port("port");
  };
  EXPECT_EQ(port("\"9999\""), 9999);
  EXPECT_EQ(port("9999"), 9999);
  EXPECT_EQ(port("0"), 0);
  EXPECT_EQ(port("\"65535\""), 65535);
  for (const char* bad :
       {"\"99x\"", "\"\"", "-1", "\"-1\"", "1.5", "\"1.5\"", "65536", "\"65536\"", "\" 99\"",
        "\"+99\"", "null", "[9999]", "1e3", "\"99999999999999999999999\""}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(endpoint_error(std::string("\"port\": ") + bad,
                               [](const EndpointConfig& e) { e.require_port("port"); }),
                HasSubstr("/tmp/x.json: communicator[0].endpoint.port: expected a port number"));
  }
}

TEST(Config, EndpointAccessors) {
  const EndpointConfig e = endpoint_with(
      R"("name": "x", "depth": 128, "depth_s": "256", "flag": true, "bad": -3, "f": "yes")");
  EXPECT_EQ(e.string_or("name", "d"), "x");
  EXPECT_EQ(e.string_or("absent", "d"), "d");
  EXPECT_EQ(e.uint_or("depth", 1), 128u);
  EXPECT_EQ(e.uint_or("depth_s", 1), 256u);
  EXPECT_EQ(e.uint_or("absent", 7), 7u);
  EXPECT_TRUE(e.bool_or("flag", false));
  EXPECT_FALSE(e.bool_or("absent", false));
  try {
    e.uint_or("bad", 1);
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(std::string(err.what()),
              "/tmp/x.json: communicator[0].endpoint.bad: expected a non-negative integer (a "
              "number or a decimal string), got -3");
  }
  EXPECT_THROW(e.bool_or("f", false), Error);
  EXPECT_THROW(e.string_or("depth", "d"), Error);
  EXPECT_THROW(e.require_string("absent"), Error);
  try {
    e.fail("name", "unknown device");
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(std::string(err.what()),
              "/tmp/x.json: communicator[0].endpoint.name: unknown device");
  }
}

TEST(Config, OptionalKeysAndLimits) {
  const Config c = parse_config(R"({
      "_comment": "ours", "comment_2": ["anything"],
      "communicator": [{"endpoint": {"suite": "tcp/ip", "protocol": "tcp", "extra": {"a": 1}}}],
      "secure_application": true, "secret_file": "keys/secret",
      "connect_timeout_ms": 250, "reply_timeout_ms": "1000",
      "limits": {"max_sessions": 8, "max_frame_bytes": 4096, "max_inflight_bytes": 1048576,
                 "idle_timeout_s": 30, "_why": "small box"}})",
                                "/etc/gvirtus/properties.json");
  EXPECT_TRUE(c.endpoints.at(0).plugins().empty());  // "plugins" may be left out
  EXPECT_TRUE(c.secure_application);
  EXPECT_EQ(c.secret_file, "/etc/gvirtus/keys/secret");
  EXPECT_EQ(c.connect_timeout_ms, 250u);
  EXPECT_EQ(c.reply_timeout_ms, 1000u);
  EXPECT_EQ(c.limits.max_sessions, 8u);
  EXPECT_EQ(c.limits.max_frame_bytes, 4096u);
  EXPECT_EQ(c.limits.max_inflight_bytes, 1048576u);
  EXPECT_EQ(c.limits.idle_timeout_s, 30u);

  const Config abs = parse_config(
      R"({"communicator": [{"endpoint": {"suite": "s", "protocol": "p"}}],
          "secret_file": "/var/lib/gvirtus/secret"})",
      "/etc/gvirtus/properties.json");
  EXPECT_EQ(abs.secret_file, "/var/lib/gvirtus/secret");
}

TEST(Config, LimitsAreRangeChecked) {
  const auto limits_error = [](const std::string& limits) {
    return config_error(R"({"communicator": [{"endpoint": {"suite": "s", "protocol": "p"}}],
                           "limits": {)" +
                        limits + "}}");
  };
  EXPECT_EQ(limits_error(R"("max_sessions": 0)"),
            "/tmp/x.json: limits.max_sessions: expected an integer from 1 to 4294967295, got 0");
  EXPECT_THAT(limits_error(R"("max_frame_bytes": 4095)"),
              HasSubstr("limits.max_frame_bytes: expected an integer from 4096 to 4294967295"));
  EXPECT_THAT(limits_error(R"("max_frame_bytes": 4294967296)"),
              HasSubstr("limits.max_frame_bytes"));
  EXPECT_THAT(limits_error(R"("idle_timeout_s": -1)"), HasSubstr("limits.idle_timeout_s"));
  EXPECT_THAT(limits_error(R"("max_inflight_bytes": 1.5)"), HasSubstr("limits.max_inflight_bytes"));
  EXPECT_THAT(config_error(R"({"communicator": [{"endpoint": {"suite": "s", "protocol": "p"}}],
                               "limits": 5})"),
              HasSubstr("/tmp/x.json: limits: expected an object, got 5"));
}

// The module cache: its place relative to the file, its bound, 0 turning it off; its mistakes
// named.
TEST(Config, ModuleCache) {
  constexpr char kEndpoint[] = R"("communicator": [{"endpoint": {"suite": "s", "protocol": "p"}}])";
  const Config defaults = parse_config(std::string("{") + kEndpoint + "}", kSource);
  EXPECT_EQ(defaults.module_cache.path, "") << "the default place, settled by the daemon";
  EXPECT_EQ(defaults.module_cache.max_bytes, uint64_t{8} << 30);
  const Config relative = parse_config(
      std::string("{") + kEndpoint + R"(, "module_cache": {"path": "cache", "max_bytes": 1024}})",
      "/etc/gvirtus/properties.json");
  EXPECT_EQ(relative.module_cache.path, "/etc/gvirtus/cache");
  EXPECT_EQ(relative.module_cache.max_bytes, 1024u);
  const Config off = parse_config(
      std::string("{") + kEndpoint + R"(, "module_cache": {"max_bytes": "0"}})", kSource);
  EXPECT_EQ(off.module_cache.max_bytes, 0u);
  const auto error = [&](const std::string& cache) {
    return config_error(std::string("{") + kEndpoint + R"(, "module_cache": )" + cache + "}");
  };
  EXPECT_EQ(error(R"({"path": ""})"),
            "/tmp/x.json: module_cache.path: expected a directory path (a non-empty string), "
            "got \"\"");
  EXPECT_THAT(error(R"({"max_bytes": -1})"), HasSubstr("module_cache.max_bytes"));
  EXPECT_THAT(error(R"({"size": 1})"), HasSubstr("/tmp/x.json: module_cache.size: unknown field"));
  EXPECT_THAT(error("true"), HasSubstr("/tmp/x.json: module_cache: expected an object, got true"));
}

// The metrics endpoint: off unless configured; its address checked before civetweb sees it.
TEST(Config, Metrics) {
  constexpr char kEndpoint[] = R"("communicator": [{"endpoint": {"suite": "s", "protocol": "p"}}])";
  EXPECT_EQ(parse_config(std::string("{") + kEndpoint + "}", kSource).metrics.listen, "");
  const auto listen = [&](const std::string& address) {
    return parse_config(
               std::string("{") + kEndpoint + R"(, "metrics": {"listen": ")" + address + R"("}})",
               kSource)
        .metrics.listen;
  };
  EXPECT_EQ(listen("127.0.0.1:9464"), "127.0.0.1:9464");
  EXPECT_EQ(listen("0.0.0.0:0"), "0.0.0.0:0");
  EXPECT_EQ(listen("[::1]:9464"), "[::1]:9464");
  EXPECT_EQ(listen("gpu-node-3:9464"), "gpu-node-3:9464");
  const auto error = [&](const std::string& metrics) {
    return config_error(std::string("{") + kEndpoint + R"(, "metrics": )" + metrics + "}");
  };
  for (const char* bad : {R"("9464")", R"(":9464")", R"("127.0.0.1:")", R"("127.0.0.1:65536")",
                          R"("127.0.0.1:94x4")", R"("::1:9464")", R"("[]:9464")", "9464", "\"\""}) {
    EXPECT_THAT(error(std::string(R"({"listen": )") + bad + "}"),
                HasSubstr("/tmp/x.json: metrics.listen: expected \"ADDRESS:PORT\""))
        << bad;
  }
  EXPECT_THAT(error(R"({"port": 9464})"), HasSubstr("/tmp/x.json: metrics.port: unknown field"));
  EXPECT_THAT(error("true"), HasSubstr("/tmp/x.json: metrics: expected an object, got true"));
}

// The device selection: the key normalised, GVIRTUS_VISIBLE_DEVICES over it, mistakes named.
TEST(Config, VisibleDevices) {
  constexpr char kEndpoint[] = R"("communicator": [{"endpoint": {"suite": "s", "protocol": "p"}}])";
  const Config all = parse_config(std::string("{") + kEndpoint + "}", kSource);
  EXPECT_EQ(all.visible_devices, "");
  const Config some =
      parse_config(std::string("{") + kEndpoint + R"(, "visible_devices": " 2, 0"})", kSource);
  EXPECT_EQ(some.visible_devices, "2,0");
  ::unsetenv("GVIRTUS_VISIBLE_DEVICES");
  EXPECT_EQ(effective_visible_devices(some), "2,0");
  ::setenv("GVIRTUS_VISIBLE_DEVICES", "3", 1);
  EXPECT_EQ(effective_visible_devices(some), "3") << "the variable replaces the key";
  ::setenv("GVIRTUS_VISIBLE_DEVICES", "", 1);
  EXPECT_EQ(effective_visible_devices(some), "2,0") << "an empty variable is no selection";
  ::setenv("GVIRTUS_VISIBLE_DEVICES", "1,one", 1);
  try {
    effective_visible_devices(some);
    ADD_FAILURE() << "a malformed variable";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("GVIRTUS_VISIBLE_DEVICES: \"1,one\": \"one\" is not an index"));
  }
  ::unsetenv("GVIRTUS_VISIBLE_DEVICES");
  EXPECT_THAT(config_error(std::string("{") + kEndpoint + R"(, "visible_devices": [0, 1]})"),
              HasSubstr("/tmp/x.json: visible_devices: expected a string such as \"0,2\""));
  EXPECT_THAT(config_error(std::string("{") + kEndpoint + R"(, "visible_devices": "0;1"})"),
              HasSubstr("/tmp/x.json: visible_devices: \"0;1\""));
}

TEST(Config, APoolNamesEachEndpointsBackend) {
  const Config pool = parse_config(R"({"communicator": [
      {"endpoint": {"suite": "tcp", "protocol": "tcp", "port": 1}, "backend": "gpu-a"},
      {"endpoint": {"suite": "tcp", "protocol": "tcp", "port": 2}, "backend": "gpu-b"},
      {"endpoint": {"suite": "shm", "protocol": "shm"}, "backend": "gpu-a"}],
      "connect_timeout_ms": 700})",
                                   kSource);
  const std::vector<PoolMember> members = pool_members(pool);
  ASSERT_EQ(members.size(), 2u) << "two backends, in the order they first appear";
  EXPECT_EQ(members[0].name, "gpu-a");
  ASSERT_EQ(members[0].config.endpoints.size(), 2u) << "gpu-a's endpoints are its alternatives";
  EXPECT_EQ(members[0].config.endpoints[0].require_port("port"), 1);
  EXPECT_EQ(members[0].config.endpoints[1].suite(), "shm");
  EXPECT_EQ(members[1].name, "gpu-b");
  ASSERT_EQ(members[1].config.endpoints.size(), 1u);
  EXPECT_EQ(members[1].config.endpoints[0].require_port("port"), 2);
  EXPECT_EQ(members[1].config.connect_timeout_ms, 700u) << "every other key as given";

  const Config one = parse_config(R"({"communicator": [
      {"endpoint": {"suite": "tcp", "protocol": "tcp", "port": 1}},
      {"endpoint": {"suite": "tcp", "protocol": "tcp", "port": 2}}]})",
                                  kSource);
  const std::vector<PoolMember> alone = pool_members(one);
  ASSERT_EQ(alone.size(), 1u) << "no backend named: one backend behind both endpoints";
  EXPECT_EQ(alone[0].name, "");
  EXPECT_EQ(alone[0].config.endpoints.size(), 2u);

  EXPECT_THAT(config_error(R"({"communicator": [
      {"endpoint": {"suite": "s", "protocol": "p"}, "backend": "a"},
      {"endpoint": {"suite": "s", "protocol": "p"}}]})"),
              HasSubstr("/tmp/x.json: communicator[1].backend: missing: communicator[0] names its "
                        "backend, so every entry must"));
  EXPECT_THAT(config_error(R"({"communicator": [
      {"endpoint": {"suite": "s", "protocol": "p"}},
      {"endpoint": {"suite": "s", "protocol": "p"}, "backend": "a"}]})"),
              HasSubstr("/tmp/x.json: communicator[1].backend: communicator[0] names no backend, "
                        "so no entry may"));
  EXPECT_THAT(config_error(R"({"communicator": [
      {"endpoint": {"suite": "s", "protocol": "p"}, "backend": ""}]})"),
              HasSubstr("/tmp/x.json: communicator[0].backend: expected a backend's name"));
  EXPECT_THAT(config_error(R"({"communicator": [
      {"endpoint": {"suite": "s", "protocol": "p"}, "backend": 2}]})"),
              HasSubstr("/tmp/x.json: communicator[0].backend: expected a backend's name"));
}

TEST(Config, UnknownKeysAreRejected) {
  const std::string top = config_error(
      R"({"communicator": [{"endpoint": {"suite": "s", "protocol": "p"}}],
          "secure_aplication": true})");
  EXPECT_THAT(top, HasSubstr("/tmp/x.json: secure_aplication: unknown field"));
  EXPECT_THAT(top, HasSubstr("secure_application"));  // the list of known keys
  EXPECT_THAT(config_error(R"({"communicator": [{"endpoint": {"suite": "s", "protocol": "p"}}],
                               "limits": {"max_session": 3}})"),
              HasSubstr("/tmp/x.json: limits.max_session: unknown field"));
  EXPECT_THAT(config_error(R"({"communicator": [{"endpoint": {"suite": "s", "protocol": "p"},
                                                 "plugin": ["cudart"]}]})"),
              HasSubstr("/tmp/x.json: communicator[0].plugin: unknown field"));
}

TEST(Config, DuplicateKeyIsASyntaxError) {
  EXPECT_EQ(config_error("{\"communicator\": [{\"endpoint\": {\"suite\": \"s\",\n"
                         "  \"port\": \"1\", \"port\": \"2\"}}]}"),
            "/tmp/x.json:2:16: duplicate key \"port\"");
}

TEST(FindConfig, GvirtusConfigWins) {
  TempDir dir;
  const fs::path file = dir.write("mine.json", kGvirtusExample);
  dir.write("home/etc/properties.json", kGvirtusExample);
  ScopedEnv config("GVIRTUS_CONFIG", file.string());
  ScopedEnv home("GVIRTUS_HOME", (dir.path() / "home").string());
  EXPECT_EQ(find_config(), file);
}

TEST(FindConfig, GvirtusHomeIsNext) {
  TempDir dir;
  const fs::path file = dir.write("home/etc/properties.json", kGvirtusExample);
  ScopedEnv config("GVIRTUS_CONFIG", std::nullopt);
  ScopedEnv home("GVIRTUS_HOME", (dir.path() / "home").string());
  EXPECT_EQ(find_config(), file);
  ScopedEnv empty_config("GVIRTUS_CONFIG", "");  // set but empty counts as unset
  EXPECT_EQ(find_config(), file);
}

TEST(FindConfig, SetButMissingIsAnError) {
  TempDir dir;
  const std::string missing = (dir.path() / "missing.json").string();
  {
    ScopedEnv config("GVIRTUS_CONFIG", missing);
    try {
      find_config();
      FAIL() << "found a missing GVIRTUS_CONFIG";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      EXPECT_THAT(e.what(), HasSubstr("GVIRTUS_CONFIG"));
      EXPECT_THAT(e.what(), HasSubstr(missing));
    }
  }
  ScopedEnv config("GVIRTUS_CONFIG", std::nullopt);
  ScopedEnv home("GVIRTUS_HOME", dir.path().string());  // no etc/properties.json there
  try {
    find_config();
    FAIL() << "found a config in an empty GVIRTUS_HOME";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("GVIRTUS_HOME"));
    EXPECT_THAT(e.what(), HasSubstr((dir.path() / "etc/properties.json").string()));
  }
}

TEST(FindConfig, InstalledDefaultOrAListOfPlaces) {
  ScopedEnv config("GVIRTUS_CONFIG", std::nullopt);
  ScopedEnv home("GVIRTUS_HOME", std::nullopt);
  // Where this runs decides which outcome we get; both must be well-formed.
  try {
    const fs::path p = find_config();
    EXPECT_TRUE(fs::exists(p)) << p;
    EXPECT_EQ(p.filename(), "properties.json");
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no configuration file found"));
    EXPECT_THAT(e.what(), HasSubstr("/properties.json"));
  }
}

}  // namespace
}  // namespace gvirtus

// The backend plugin ABI (backend/plugin_abi.h): a plugin built for another ABI is refused with a
// message naming it and the versions, only where a session asks for it, while the daemon and the
// other plugins go on; and a plugin behind the ABI (probe, through backend/plugin_export.h) brings
// its errors across as kinds and messages, a malformed request ending only its session. A variant
// ("probe-variant") serves its plugin's calls under its configured name, and naming it beside the
// plugin it varies is an error.
#include <gtest/gtest.h>

#include <string>

#include <cstdlib>

#include "backend/plugin_registry.h"
#include "frontend/client.h"
#include "protocol/handshake.h"
#include "session/probe_calls.h"
#include "session/probe_client.h"
#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

constexpr const char* kPlugins = R"(["probe", "probe_next", "probe_old"])";

std::string open_refusal(Client& client, const char* name, uint16_t id) {
  try {
    client.open_plugin(PluginRef{id, name, 0}, 0);
  } catch (const Error& e) {
    return e.what();
  }
  return "(opened)";
}

TEST(PluginAbi, plugins_built_for_another_abi_are_refused_by_name_and_the_session_goes_on) {
  BackendProcess backend("", kPlugins);
  const std::string log = backend.log();
  EXPECT_NE(log.find("plugin \"probe_next\" cannot be served"), std::string::npos) << log;
  EXPECT_NE(log.find("plugin \"probe_old\" cannot be served"), std::string::npos) << log;

  Client client(backend.client_config(), {to_ref(probe::kIdentity)});
  const uint32_t worker = worker_pid(client);
  const struct {
    const char* name;
    uint16_t id;
    const char* why;
  } refused[] = {
      {"probe_next", 101, "was built for backend plugin ABI 2, and this backend speaks ABI 1"},
      {"probe_old", 102, "the C++ plugin interface that preceded backend plugin ABI 1"},
  };
  for (const auto& r : refused) {
    const std::string message = open_refusal(client, r.name, r.id);
    EXPECT_NE(
        message.find("plugin \"" + std::string(r.name) + "\" cannot be served by this backend"),
        std::string::npos)
        << message;
    EXPECT_NE(message.find(r.why), std::string::npos) << message;
  }
  EXPECT_EQ(worker_pid(client), worker) << "the session went on";
}

TEST(PluginAbi, a_hello_naming_a_refused_plugin_is_refused_with_the_reason) {
  BackendProcess backend("", kPlugins);
  Client client(backend.client_config(), {PluginRef{101, "probe_next", 0}});
  try {
    client.connect();
    FAIL() << "connected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"probe_next\" cannot be served by this backend"),
              std::string::npos)
        << e.what();
  }
}

TEST(PluginAbi, errors_cross_the_abi_as_kinds_and_a_malformed_request_ends_only_its_session) {
  BackendProcess backend("", kPlugins);
  Client client(backend.client_config(), {to_ref(probe::kIdentity)});
  const std::byte payload[] = {std::byte{1}, std::byte{2}, std::byte{3}};
  const ByteView echo[] = {ByteView(payload)};
  std::vector<std::byte> echoed;
  client.call(probe::call_id(probe::Fn::kEcho), echo, [&](WireReader& in) {
    const auto bytes = in.get_raw(in.remaining());
    echoed.assign(bytes.begin(), bytes.end());
  });
  EXPECT_EQ(echoed, std::vector<std::byte>(std::begin(payload), std::end(payload)));
  try {
    client.call(probe::call_id(static_cast<probe::Fn>(7)), {}, [](WireReader&) {});
    FAIL() << "an unknown probe call succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("probe call 7 is unknown"), std::string::npos) << e.what();
  }
  // WorkerPid takes no arguments: these are malformed, and end the session (kInvalidInput).
  try {
    client.call(probe::call_id(probe::Fn::kWorkerPid), echo, [](WireReader&) {});
    FAIL() << "a malformed request was served";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
  }
  Client fresh(backend.client_config(), {to_ref(probe::kIdentity)});
  EXPECT_GT(worker_pid(fresh), 0u) << "the backend serves the next session";
}

TEST(PluginVariants, a_variant_serves_its_plugins_calls_under_its_configured_name) {
  BackendProcess backend("", R"(["probe-variant"])");
  EXPECT_TRUE(backend.logged("probe-variant")) << backend.log();
  Client client(backend.client_config(), {to_ref(probe::kIdentity)});
  EXPECT_GT(worker_pid(client), 0u) << "probe's calls, served by the variant";
}

TEST(PluginAbi, a_table_of_the_first_size_is_served_and_never_read_past_its_end) {
  // probe-first's table ends at close_session; the field after it would abort the worker.
  BackendProcess backend("", R"(["probe-first"])");
  Client client(backend.client_config(), {to_ref(probe::kIdentity)});
  const uint32_t worker = worker_pid(client);
  EXPECT_GT(worker, 0u);
  // A synchronous reply relays the worker's output, asking the plugin whether the call printed
  // (BackendPlugin::quiet), which this table cannot answer: every call may print.
  client.call(probe::call_id(probe::Fn::kQuiet), {}, [](WireReader& in) { in.expect_end(); });
  EXPECT_EQ(worker_pid(client), worker) << "the worker survived its calls";
}

TEST(PluginVariants, a_variant_beside_the_plugin_it_varies_is_refused_naming_both) {
  ::setenv("GVIRTUS_HOME", GVIRTUS_BUILD_DIR, 1);
  // Plugins live as long as the process (plugin_registry.h): so does this registry.
  static PluginRegistry& registry = *new PluginRegistry;
  registry.load("probe-variant");
  ASSERT_NE(registry.find(probe::kIdentity.id), nullptr);
  EXPECT_EQ(registry.configured_name(probe::kIdentity.id), "probe-variant");
  EXPECT_NE(registry.names().find("probe-variant"), std::string::npos) << registry.names();
  registry.load("probe-variant");  // named by a second endpoint: the same plugin
  try {
    registry.load("probe");
    FAIL() << "probe loaded beside its variant";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("\"probe\" serves the calls of \"probe\", which another "
                                         "configured plugin serves already"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gvirtus::testing

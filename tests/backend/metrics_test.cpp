// The backend's /metrics: the shared counters and the families built from them, then the real
// gvirtus-backend serving them over HTTP while real clients (gvirtus-ping) make calls. Every
// figure read back is checked against the calls made: counts, bytes, sessions, authentication
// failures and sessions refused for limits. A metrics address that cannot be served stops the
// daemon with the reason; the daemon outlives a metrics process that dies.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>

#include "backend/metrics_server.h"
#include "backend/metrics_table.h"
#include "common/unique_fd.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "support/backend_process.h"
#include "support/core_calls.h"
#include "support/http_get.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

const std::string kBin = GVIRTUS_BUILD_BIN;

// The value of the series written exactly as `series` (name{labels}) in an exposition text.
std::optional<double> sample(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

std::string exposition(const MetricsTable& table, const BackendStatus& status) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, collect_metric_families(table, status));
  return out.str();
}

TEST(MetricsTable, latency_buckets_are_cumulative_and_unknown_names_count_as_other) {
  MetricsTable table;
  ASSERT_TRUE(table.name_plugin(0, "core"));
  ASSERT_TRUE(table.name_plugin(7, "cudart"));
  const size_t tcp = MetricsTable::transport_index("tcp");
  EXPECT_EQ(MetricsTable::transport_index("carrier-pigeon"), kTransports.size() - 1);
  table.record_call(tcp, table.plugin_index(7), 100, 40, 3'000, false);          // 3 us
  table.record_call(tcp, table.plugin_index(7), 200, 50, 2'000'000, true);       // 2 ms
  table.record_call(tcp, table.plugin_index(7), 300, 60, 9'000'000'000, false);  // 9 s: +Inf
  table.record_call(tcp, table.plugin_index(99), 1, 1, 1, false);  // a plugin nobody named
  const CallFigures f = table.call_figures(tcp, table.plugin_index(7));
  EXPECT_EQ(f.calls, 3u);
  EXPECT_EQ(f.failed, 1u);
  EXPECT_EQ(f.request_bytes, 600u);
  EXPECT_EQ(f.reply_bytes, 150u);
  EXPECT_EQ(f.latency_sum_ns, 9'002'003'000u);
  EXPECT_EQ(f.latency_buckets.front(), 1u);  // <= 5 us
  EXPECT_EQ(f.latency_buckets[7], 1u);       // <= 1 ms: the 2 ms call is not in it
  EXPECT_EQ(f.latency_buckets[8], 2u);       // <= 2.5 ms
  EXPECT_EQ(f.latency_buckets[kLatencyBoundsS.size() - 1], 2u);  // <= 5 s
  EXPECT_EQ(f.latency_buckets.back(), 3u);                       // +Inf: every call
  const auto rows = table.plugin_rows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1], (std::pair<size_t, std::string>(table.plugin_index(7), "cudart")));
  EXPECT_EQ(rows.back(), (std::pair<size_t, std::string>(kOtherPluginRow, "other")));
  EXPECT_EQ(table.plugin_index(99), kOtherPluginRow);
  EXPECT_EQ(table.call_figures(tcp, kOtherPluginRow).calls, 1u);
}

TEST(MetricsTable, a_daemon_with_too_many_plugins_counts_the_rest_as_other) {
  MetricsTable table;
  for (uint16_t id = 0; id < kMaxMetricsPlugins; ++id) {
    ASSERT_TRUE(table.name_plugin(id, "p" + std::to_string(id)));
  }
  EXPECT_FALSE(table.name_plugin(500, "one-too-many"));
  EXPECT_EQ(table.plugin_index(500), kOtherPluginRow);
  EXPECT_TRUE(table.name_plugin(3, "p3")) << "naming a named plugin again is no new entry";
}

TEST(MetricsFamilies, served_transports_show_zeros_and_sessions_carry_their_labels) {
  MetricsTable table;
  table.name_plugin(0, "core");
  table.name_plugin(7, "cudart");
  table.mark_served(MetricsTable::transport_index("shm"));
  const size_t shm = MetricsTable::transport_index("shm");
  table.record_call(shm, table.plugin_index(7), 132, 36, 4'000, false);
  table.count_session(shm);
  table.count_auth_failure(MetricsTable::transport_index("tcp"));  // tcp is not served
  BackendStatus status;
  status.backend_version = "gvirtus-backend 9.9";
  status.max_sessions = 8;
  SessionStatus s;
  s.worker_pid = 4242;
  s.client_pid = 17;
  s.peer = "shm:///run/x";
  s.transport = "shm";
  s.program = "matmul";
  s.allocated_bytes = 1 << 20;
  status.sessions.push_back(s);
  GpuStatus g;
  g.index = 0;
  g.name = "Simulated";
  g.bus_id = "0000:00:00.0";
  g.memory_total_bytes = 1000;
  status.gpus.push_back(g);

  const std::string text = exposition(table, status);
  EXPECT_EQ(sample(text, R"(gvirtus_calls_total{plugin="cudart",transport="shm"})"), 1);
  EXPECT_EQ(sample(text, R"(gvirtus_calls_total{plugin="core",transport="shm"})"), 0)
      << "a served transport reports zeros for every plugin";
  EXPECT_EQ(sample(text, R"(gvirtus_calls_total{plugin="other",transport="shm"})"), std::nullopt)
      << "other appears only once something counted there";
  EXPECT_EQ(sample(text, R"(gvirtus_calls_total{plugin="core",transport="tcp"})"), std::nullopt)
      << "no zeros for a transport not served";
  EXPECT_EQ(sample(text, R"(gvirtus_auth_failures_total{transport="tcp"})"), 1)
      << "a transport not served still reports what it counted";
  EXPECT_EQ(sample(text, R"(gvirtus_request_bytes_total{plugin="cudart",transport="shm"})"), 132);
  EXPECT_EQ(sample(text, R"(gvirtus_reply_bytes_total{plugin="cudart",transport="shm"})"), 36);
  EXPECT_EQ(
      sample(text,
             R"(gvirtus_call_duration_seconds_bucket{plugin="cudart",transport="shm",le="5e-06"})"),
      1);
  EXPECT_EQ(sample(text, R"(gvirtus_call_duration_seconds_count{plugin="cudart",transport="shm"})"),
            1);
  EXPECT_EQ(sample(text, R"(gvirtus_sessions_total{transport="shm"})"), 1);
  EXPECT_EQ(sample(text, R"(gvirtus_sessions_active{transport="shm"})"), 1);
  EXPECT_EQ(sample(text, R"(gvirtus_max_sessions)"), 8);
  EXPECT_EQ(
      sample(
          text,
          R"(gvirtus_session_allocated_bytes{client_pid="17",peer="shm:///run/x",program="matmul",transport="shm",worker_pid="4242"})"),
      1 << 20);
  EXPECT_EQ(text.find("gvirtus_session_device_memory_bytes"), std::string::npos)
      << "a figure NVML could not give is left out, not reported as 0";
  EXPECT_EQ(
      sample(text,
             R"(gvirtus_gpu_memory_total_bytes{bus_id="0000:00:00.0",gpu="0",name="Simulated"})"),
      1000);
  EXPECT_EQ(text.find("gvirtus_gpu_memory_used_bytes"), std::string::npos);
  EXPECT_EQ(sample(text, R"(gvirtus_gpus)"), 1);
}

// A backend serving /metrics on a port of its own choosing, which it logs.
struct MetricsBackend {
  explicit MetricsBackend(const std::string& extra_json = "",
                          TestTransport transport = TestTransport::tcp)
      : backend(BackendOptions{.extra_json = R"("metrics":{"listen":"127.0.0.1:0"})" +
                                             (extra_json.empty() ? "" : "," + extra_json),
                               .transport = transport}) {
    const std::regex logged_port(
        R"(metrics on http://127\.0\.0\.1:(\d+)/metrics \(process (\d+)\))");
    std::smatch m;
    const bool found = eventually(10000, [&] {
      const std::string log = backend.log();
      if (!std::regex_search(log, m, logged_port)) return false;
      port = static_cast<uint16_t>(std::stoi(m[1]));
      metrics_pid = std::stoi(m[2]);
      return true;
    });
    EXPECT_TRUE(found) << backend.log();
  }

  std::string scrape() const {
    const auto response = http_get(port, "/metrics");
    if (!response) {
      ADD_FAILURE() << "no answer on the metrics port " << port;
      return {};
    }
    EXPECT_EQ(response->status, 200) << response->body;
    return response->body;
  }

  BackendProcess backend;
  uint16_t port = 0;
  pid_t metrics_pid = -1;
};

std::string ping_command(const BackendProcess& backend, int count, int bytes) {
  return kBin + "/gvirtus-ping --config " + backend.client_config_file() + " --count " +
         std::to_string(count) + " --bytes " + std::to_string(bytes) + " > /dev/null 2>&1";
}

class MetricsOverTransport : public ::testing::TestWithParam<TestTransport> {};

TEST_P(MetricsOverTransport, a_scrape_counts_every_call_with_its_bytes) {
  MetricsBackend m({}, GetParam());
  const std::string transport = to_string(GetParam());
  const std::string core = R"({plugin="core",transport=")" + transport + R"("})";
  const std::string before = m.scrape();
  EXPECT_EQ(sample(before, "gvirtus_calls_total" + core), 0) << before;
  EXPECT_EQ(sample(before, R"(gvirtus_sessions_total{transport=")" + transport + R"("})"), 0);

  ASSERT_EQ(run(ping_command(m.backend, 25, 100)).status, 0);
  ASSERT_EQ(run(ping_command(m.backend, 10, 1000)).status, 0);
  // A call is counted once its reply is sent, so the client may have its last reply (and exit)
  // a moment before the count shows it: wait for every call, then check the rest.
  std::string after;
  EXPECT_TRUE(eventually(5000, [&] {
    after = m.scrape();
    return sample(after, "gvirtus_calls_total" + core) == 35;
  })) << after;
  // A ping's request and reply are a 32-byte header and its payload.
  EXPECT_EQ(sample(after, "gvirtus_call_errors_total" + core), 0);
  EXPECT_EQ(sample(after, "gvirtus_request_bytes_total" + core), 25 * 132 + 10 * 1032);
  EXPECT_EQ(sample(after, "gvirtus_reply_bytes_total" + core), 25 * 132 + 10 * 1032);
  EXPECT_EQ(sample(after, "gvirtus_call_duration_seconds_count" + core), 35);
  const std::string inf = R"(gvirtus_call_duration_seconds_bucket{plugin="core",transport=")" +
                          transport + R"(",le="+Inf"})";
  EXPECT_EQ(sample(after, inf), 35);
  EXPECT_GT(sample(after, "gvirtus_call_duration_seconds_sum" + core).value_or(0), 0);
  EXPECT_EQ(sample(after, R"(gvirtus_sessions_total{transport=")" + transport + R"("})"), 2);
  EXPECT_TRUE(eventually(5000, [&] {
    return sample(m.scrape(), R"(gvirtus_sessions_active{transport=")" + transport + R"("})") == 0;
  })) << "both pings are over";
}

INSTANTIATE_TEST_SUITE_P(Transports, MetricsOverTransport,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(Metrics, a_live_session_shows_with_its_program_and_worker) {
  MetricsBackend m;
  Client client(m.backend.client_config(), {});
  ASSERT_TRUE(ping(client));
  const std::vector<pid_t> workers = m.backend.workers();
  const std::string text = m.scrape();
  EXPECT_EQ(sample(text, R"(gvirtus_sessions_active{transport="tcp"})"), 1) << text;
  // The worker's pid labels the session's device memory; none is allocated through core.
  bool found = false;
  for (const pid_t w : workers) {
    const std::string label = "worker_pid=\"" + std::to_string(w) + "\"";
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("gvirtus_session_allocated_bytes{", 0) == 0 &&
          line.find(label) != std::string::npos) {
        found = true;
        EXPECT_EQ(line.substr(line.rfind(' ') + 1), "0") << line;
        EXPECT_NE(line.find("transport=\"tcp\""), std::string::npos) << line;
      }
    }
  }
  EXPECT_TRUE(found) << text;
}

TEST(Metrics, authentication_failures_and_sessions_refused_for_limits_are_counted) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("gvirtus-metrics-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string secret = dir + "/secret", wrong = dir + "/wrong";
  std::ofstream(secret) << "c2VjcmV0IHNoYXJlZCBieSBib3RoIHNpZGVzIG9mIHRoZSB0ZXN0Cg==\n";
  std::ofstream(wrong) << "YW5vdGhlciBzZWNyZXQsIG5vdCB0aGUgYmFja2VuZCdzIG9uZQo=\n";
  std::filesystem::permissions(
      secret, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::permissions(
      wrong, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  MetricsBackend m(R"("secret_file":")" + secret + R"(","limits":{"max_sessions":1})");
  auto config_with = [&](const std::string& file) {
    Config config = m.backend.client_config();
    config.secret_file = file;
    config.secure_application = true;
    return config;
  };
  EXPECT_NE(error_of([&] {
              Client refused(config_with(wrong), {});
              ping(refused);
            }),
            ErrorKind{0});
  // Its worker must be gone before the one session is taken, or it would count against the limit
  // (the metrics process is the daemon's one other child).
  ASSERT_TRUE(eventually(5000, [&] { return m.backend.workers().size() == 1; }));
  Client holder(config_with(secret), {});
  ASSERT_TRUE(ping(holder));
  // The one session is taken: a second is accepted for status queries only, and its ping is
  // turned away as overloaded.
  EXPECT_EQ(error_of([&] {
              Client second(config_with(secret), {});
              ping(second);
            }),
            ErrorKind::kOverloaded);
  EXPECT_TRUE(eventually(5000, [&] {
    const std::string text = m.scrape();
    return sample(text, R"(gvirtus_auth_failures_total{transport="tcp"})") == 1 &&
           sample(text,
                  R"(gvirtus_sessions_refused_total{limit="max_sessions",transport="tcp"})") == 1;
  })) << m.scrape();
  std::filesystem::remove_all(dir);
}

TEST(Metrics, an_address_in_use_stops_the_backend_with_the_reason) {
  UniqueFd taken(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(taken.get(), 1), 0);
  socklen_t len = sizeof addr;
  ::getsockname(taken.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  const std::string config = std::filesystem::temp_directory_path() /
                             ("gvirtus-metrics-busy-" + std::to_string(::getpid()) + ".json");
  std::ofstream(config) << R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp",)"
                        << R"("server_address":"127.0.0.1","port":"0"},"plugins":[]}],)"
                        << R"("metrics":{"listen":"127.0.0.1:)" << port << R"("}})";
  const auto [output, code] =
      run_merged("timeout 30 " + kBin + "/gvirtus-backend --config " + config);
  std::filesystem::remove(config);
  EXPECT_NE(code, 0) << output;
  EXPECT_NE(code, 124) << "the backend must stop, not serve without its metrics";
  EXPECT_NE(output.find("metrics.listen: cannot serve metrics on 127.0.0.1:" + port),
            std::string::npos)
      << output;
}

TEST(Metrics, the_daemon_serves_on_when_its_metrics_process_dies) {
  MetricsBackend m;
  ASSERT_GT(m.metrics_pid, 0);
  ASSERT_EQ(::kill(m.metrics_pid, SIGKILL), 0);
  EXPECT_TRUE(m.backend.logged("the metrics process ended (signal 9)")) << m.backend.log();
  EXPECT_TRUE(m.backend.logged("metrics stay off until the backend restarts"))
      << "it died within seconds of its start: not started again";
  EXPECT_EQ(run(ping_command(m.backend, 5, 10)).status, 0) << m.backend.log();
  EXPECT_TRUE(process_exists(m.backend.pid()));
}

TEST(Metrics, there_is_no_metrics_endpoint_unless_one_is_configured) {
  BackendProcess backend;
  ASSERT_EQ(run(ping_command(backend, 1, 10)).status, 0);
  EXPECT_EQ(backend.log().find("metrics on"), std::string::npos) << backend.log();
  EXPECT_TRUE(backend.workers().empty() ||
              eventually(5000, [&] { return backend.workers().empty(); }))
      << "no child but the session's workers";
}

}  // namespace
}  // namespace gvirtus::testing

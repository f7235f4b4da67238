// A real Prometheus (Debian's, started here on loopback with a generated configuration) scrapes a
// real gvirtus-backend while clients load it with calls; the call, byte and session counters that
// Prometheus then answers through its HTTP API are checked against the calls made. This is what
// docs/metrics.md tells operators to set up, run end to end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/json.h"
#include "support/backend_process.h"
#include "support/free_port.h"
#include "support/http_get.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

const std::string kBin = GVIRTUS_BUILD_BIN;

// Prometheus scraping http://127.0.0.1:`target_port`/metrics every second, with its data in a
// temporary directory; stopped (SIGTERM, then SIGKILL) and removed when the test ends.
class PrometheusProcess {
 public:
  explicit PrometheusProcess(uint16_t target_port) {
    char tmpl[] = "/tmp/gvirtus-prometheus-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::ofstream(dir_ + "/prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        << "scrape_configs:\n  - job_name: gvirtus\n    static_configs:\n"
        << "      - targets: ['127.0.0.1:" << target_port << "']\n";
    port_ = free_loopback_port();
    const std::string config = "--config.file=" + dir_ + "/prometheus.yml";
    const std::string storage = "--storage.tsdb.path=" + dir_ + "/data";
    const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    const std::string log = dir_ + "/log";
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execlp("prometheus", "prometheus", config.c_str(), storage.c_str(), listen.c_str(),
               "--log.level=warn", static_cast<char*>(nullptr));
      std::fprintf(stderr, "cannot run prometheus: %s\n", std::strerror(errno));
      ::_exit(127);
    }
  }
  ~PrometheusProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      if (!eventually(10000, [&] { return ::waitpid(pid_, nullptr, WNOHANG) == pid_; })) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  PrometheusProcess(const PrometheusProcess&) = delete;
  PrometheusProcess& operator=(const PrometheusProcess&) = delete;

  // Whether Prometheus answers /-/ready within `ms`.
  bool ready(int ms) const {
    return eventually(ms, [&] {
      const auto r = http_get(port_, "/-/ready", 1000);
      return r && r->status == 200;
    });
  }

  // The value of the one sample an instant query returns; nullopt when it returns none or more.
  std::optional<double> query(const std::string& promql) const {
    const auto r = http_get(port_, "/api/v1/query?query=" + url_encode(promql));
    if (!r || r->status != 200) return std::nullopt;
    try {
      const JsonValue doc = parse_json(r->body, "prometheus reply");
      const JsonValue* data = doc.find("data");
      const JsonValue* result = data != nullptr ? data->find("result") : nullptr;
      if (result == nullptr || !result->is_array() || result->size() != 1) return std::nullopt;
      const JsonValue* value = result->at(0).find("value");
      if (value == nullptr || !value->is_array() || value->size() != 2) return std::nullopt;
      return std::stod(value->at(1).as_string());
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  std::string log() const {
    std::ifstream in(dir_ + "/log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::string dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

constexpr int kClients = 3;
constexpr int kPingsPerBatch = 2000;
constexpr int kPingBytes = 64;

TEST(Prometheus, scrapes_a_loaded_backend_and_its_counters_match_the_calls_made) {
  BackendProcess backend(R"("metrics":{"listen":"127.0.0.1:0"})");
  const std::regex logged_port(R"(metrics on http://127\.0\.0\.1:(\d+)/metrics)");
  uint16_t metrics_port = 0;
  ASSERT_TRUE(eventually(10000, [&] {
    std::smatch m;
    const std::string log = backend.log();
    if (!std::regex_search(log, m, logged_port)) return false;
    metrics_port = static_cast<uint16_t>(std::stoi(m[1]));
    return true;
  })) << backend.log();

  PrometheusProcess prometheus(metrics_port);
  ASSERT_TRUE(prometheus.ready(60000))
      << "Prometheus did not start (Debian's prometheus, which scripts/lib.sh installs):\n"
      << prometheus.log();
  ASSERT_TRUE(eventually(30000, [&] { return prometheus.query("up{job=\"gvirtus\"}") == 1; }))
      << "Prometheus never scraped the backend:\n"
      << prometheus.log();

  // Clients ping in batches until Prometheus has seen calls while they were still being made:
  // the scrape happens under load, and the totals stay exact (whole batches only).
  const std::string calls = R"(gvirtus_calls_total{job="gvirtus",plugin="core",transport="tcp"})";
  std::atomic<bool> stop{false};
  std::atomic<int> batches{0}, failed_batches{0};
  std::vector<std::thread> clients;
  const std::string ping = kBin + "/gvirtus-ping --config " + backend.client_config_file() +
                           " --count " + std::to_string(kPingsPerBatch) + " --bytes " +
                           std::to_string(kPingBytes) + " > /dev/null 2>&1";
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&] {
      while (!stop) (run(ping).status == 0 ? batches : failed_batches)++;
    });
  }
  const bool seen_under_load =
      eventually(60000, [&] { return prometheus.query(calls).value_or(0) > 0; });
  stop = true;
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(seen_under_load) << prometheus.log();
  ASSERT_EQ(failed_batches, 0);

  const double expected_calls = double{1} * batches * kPingsPerBatch;
  EXPECT_TRUE(eventually(30000, [&] { return prometheus.query(calls) == expected_calls; }))
      << "Prometheus has " << prometheus.query(calls).value_or(-1) << " calls, " << batches
      << " batches of " << kPingsPerBatch << " were made";
  const std::string labels = R"({job="gvirtus",plugin="core",transport="tcp"})";
  const double frame_bytes = expected_calls * (32 + kPingBytes);
  EXPECT_EQ(prometheus.query("gvirtus_request_bytes_total" + labels), frame_bytes);
  EXPECT_EQ(prometheus.query("gvirtus_reply_bytes_total" + labels), frame_bytes);
  EXPECT_EQ(prometheus.query("gvirtus_call_errors_total" + labels), 0);
  EXPECT_EQ(prometheus.query("gvirtus_call_duration_seconds_count" + labels), expected_calls);
  EXPECT_EQ(prometheus.query(R"(gvirtus_sessions_total{job="gvirtus",transport="tcp"})"),
            double{1} * batches);
  // Prometheus reads the histogram as one: the median of every call is a latency it can name.
  const auto median = prometheus.query(
      "histogram_quantile(0.5, sum by (le) (gvirtus_call_duration_seconds_bucket" + labels + "))");
  ASSERT_TRUE(median.has_value());
  EXPECT_GT(*median, 0);
  EXPECT_LT(*median, 5);
}

}  // namespace
}  // namespace gvirtus::testing

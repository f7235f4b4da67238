#include "backend/metrics_server.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <memory>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include "backend/backend_status.h"
#include "common/log.h"

namespace gvirtus {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// Builds the families of one scrape; each family is added once, its series as they come (a
// deque: the references add() returns stay valid as families are added).
class Families {
 public:
  MetricFamily& add(const char* name, const char* help, MetricType type) {
    families_.push_back(MetricFamily{name, help, type, {}});
    return families_.back();
  }
  // The families that have series: one with none says nothing.
  std::vector<MetricFamily> take() {
    std::vector<MetricFamily> out;
    for (MetricFamily& f : families_) {
      if (!f.metric.empty()) out.push_back(std::move(f));
    }
    return out;
  }

 private:
  std::deque<MetricFamily> families_;
};

void add_counter(MetricFamily& family, Labels labels, uint64_t value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = static_cast<double>(value);
  family.metric.push_back(std::move(m));
}

void add_gauge(MetricFamily& family, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  family.metric.push_back(std::move(m));
}

void add_histogram(MetricFamily& family, Labels labels, const CallFigures& figures) {
  ClientMetric m;
  m.label = std::move(labels);
  m.histogram.sample_count = figures.latency_buckets.back();
  m.histogram.sample_sum = static_cast<double>(figures.latency_sum_ns) * 1e-9;
  for (size_t i = 0; i < kLatencyBoundsS.size(); ++i) {
    m.histogram.bucket.push_back({figures.latency_buckets[i], kLatencyBoundsS[i]});
  }
  m.histogram.bucket.push_back(
      {figures.latency_buckets.back(), std::numeric_limits<double>::infinity()});
  family.metric.push_back(std::move(m));
}

void add_session_and_call_families(Families& out, const MetricsTable& metrics) {
  auto& sessions =
      out.add("gvirtus_sessions_total", "Client sessions whose handshake completed, per transport",
              MetricType::Counter);
  auto& auth = out.add("gvirtus_auth_failures_total",
                       "Clients that failed to authenticate (wrong or missing proof of the secret)",
                       MetricType::Counter);
  auto& refused =
      out.add("gvirtus_sessions_refused_total",
              "Sessions turned away by a limit (label limit: which one)", MetricType::Counter);
  auto& handshakes = out.add("gvirtus_handshake_failures_total",
                             "Handshakes that failed for another reason than authentication "
                             "(malformed hello, protocol version, refused plugin, timeout)",
                             MetricType::Counter);
  auto& calls =
      out.add("gvirtus_calls_total", "Calls served, per transport and plugin", MetricType::Counter);
  auto& failed = out.add("gvirtus_call_errors_total",
                         "Calls answered with a gvirtus error (not a CUDA status: those are "
                         "ordinary replies)",
                         MetricType::Counter);
  auto& request_bytes =
      out.add("gvirtus_request_bytes_total", "Request bytes received, frame headers included",
              MetricType::Counter);
  auto& reply_bytes = out.add("gvirtus_reply_bytes_total",
                              "Reply bytes sent, frame headers included", MetricType::Counter);
  auto& latency = out.add("gvirtus_call_duration_seconds",
                          "Time the backend took to serve a call, from the start of its handling "
                          "to its reply being sent (the network's share left out)",
                          MetricType::Histogram);
  const std::vector<std::pair<size_t, std::string>> plugins = metrics.plugin_rows();
  for (size_t t = 0; t < kTransports.size(); ++t) {
    const TransportFigures tf = metrics.transport_figures(t);
    const bool served = metrics.served(t);
    const std::string transport(kTransports[t]);
    if (served || tf.sessions + tf.auth_failures + tf.refused_for_limits != 0) {
      add_counter(sessions, {{"transport", transport}}, tf.sessions);
      add_counter(auth, {{"transport", transport}}, tf.auth_failures);
      add_counter(refused, {{"limit", "max_sessions"}, {"transport", transport}},
                  tf.refused_for_limits);
      add_counter(handshakes, {{"transport", transport}}, tf.handshake_failures);
    }
    for (const auto& [row, plugin] : plugins) {
      const CallFigures cf = metrics.call_figures(t, row);
      // Zeros only for the named plugins of a transport served.
      if (cf.calls == 0 && (!served || row == kOtherPluginRow)) continue;
      const Labels labels = {{"plugin", plugin}, {"transport", transport}};
      add_counter(calls, labels, cf.calls);
      add_counter(failed, labels, cf.failed);
      add_counter(request_bytes, labels, cf.request_bytes);
      add_counter(reply_bytes, labels, cf.reply_bytes);
      add_histogram(latency, labels, cf);
    }
  }
}

void add_status_families(Families& out, const MetricsTable& metrics, const BackendStatus& status) {
  add_gauge(out.add("gvirtus_backend_info", "The backend's version (the value is always 1)",
                    MetricType::Gauge),
            {{"version", status.backend_version}}, 1);
  add_gauge(out.add("gvirtus_backend_start_time_seconds",
                    "When the daemon started, in seconds since the Unix epoch", MetricType::Gauge),
            {}, static_cast<double>(status.started_unix_s));
  add_gauge(out.add("gvirtus_max_sessions", "limits.max_sessions of the daemon", MetricType::Gauge),
            {}, status.max_sessions);

  auto& active = out.add("gvirtus_sessions_active", "Sessions being served now, per transport",
                         MetricType::Gauge);
  auto& allocated = out.add("gvirtus_session_allocated_bytes",
                            "Device memory a session's application has allocated through gvirtus",
                            MetricType::Gauge);
  auto& held = out.add("gvirtus_session_device_memory_bytes",
                       "Device memory a session's worker holds on all GPUs, its CUDA contexts "
                       "included (NVML; absent where NVML cannot tell)",
                       MetricType::Gauge);
  std::map<std::string, uint64_t> per_transport;  // zeros for every transport served
  for (size_t t = 0; t < kTransports.size(); ++t) {
    if (metrics.served(t)) per_transport[std::string(kTransports[t])];
  }
  for (const SessionStatus& s : status.sessions) {
    ++per_transport[s.transport];
    const Labels labels = {{"client_pid", std::to_string(s.client_pid)},
                           {"peer", s.peer},
                           {"program", s.program},
                           {"transport", s.transport},
                           {"worker_pid", std::to_string(s.worker_pid)}};
    add_gauge(allocated, labels, static_cast<double>(s.allocated_bytes));
    if (s.device_memory_bytes != SessionStatus::kUnknown) {
      add_gauge(held, labels, static_cast<double>(s.device_memory_bytes));
    }
  }
  for (const auto& [transport, n] : per_transport) {
    add_gauge(active, {{"transport", transport}}, static_cast<double>(n));
  }

  auto& gpus_up = out.add("gvirtus_gpus",
                          "GPUs the backend sees (NVML); 0 with the reason in "
                          "gvirtus_gpu_inventory_error where it cannot list them",
                          MetricType::Gauge);
  add_gauge(gpus_up, {}, static_cast<double>(status.gpus.size()));
  if (!status.gpu_error.empty()) {
    add_gauge(
        out.add("gvirtus_gpu_inventory_error",
                "Why the backend cannot list its GPUs (the value is always 1)", MetricType::Gauge),
        {{"reason", status.gpu_error}}, 1);
  }
  auto& used = out.add("gvirtus_gpu_memory_used_bytes", "Device memory in use on a GPU (NVML)",
                       MetricType::Gauge);
  auto& total =
      out.add("gvirtus_gpu_memory_total_bytes", "Device memory of a GPU (NVML)", MetricType::Gauge);
  auto& busy = out.add("gvirtus_gpu_utilization_ratio",
                       "Share of the driver's last sample period the GPU was busy (NVML)",
                       MetricType::Gauge);
  for (const GpuStatus& g : status.gpus) {
    const Labels labels = {
        {"bus_id", g.bus_id}, {"gpu", std::to_string(g.index)}, {"name", g.name}};
    if (g.memory_used_bytes != GpuStatus::kUnknown) {
      add_gauge(used, labels, static_cast<double>(g.memory_used_bytes));
    }
    if (g.memory_total_bytes != GpuStatus::kUnknown) {
      add_gauge(total, labels, static_cast<double>(g.memory_total_bytes));
    }
    if (g.utilization_percent != GpuStatus::kUnknown) {
      add_gauge(busy, labels, static_cast<double>(g.utilization_percent) / 100.0);
    }
  }
}

// What the exposer asks at each scrape.
class Collector final : public prometheus::Collectable {
 public:
  explicit Collector(const MetricsTable& metrics) : metrics_(metrics) {}
  std::vector<MetricFamily> Collect() const override {
    try {
      return collect_metric_families(metrics_, read_backend_status(0));
    } catch (const std::exception& e) {  // civetweb's thread must not see it
      GVIRTUS_LOG(kError) << "metrics: a scrape failed: " << e.what();
      return {};
    }
  }

 private:
  const MetricsTable& metrics_;
};

void report(int fd, const std::string& line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the daemon went away: nothing to tell
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

}  // namespace

std::vector<MetricFamily> collect_metric_families(const MetricsTable& metrics,
                                                  const BackendStatus& status) {
  Families out;
  add_session_and_call_families(out, metrics);
  add_status_families(out, metrics, status);
  return out.take();
}

void serve_metrics(const std::string& listen, const MetricsTable& metrics, int ready_fd) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  // Blocked before civetweb starts its threads, so that they inherit the mask and the signal
  // waits for sigwait below.
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  std::unique_ptr<prometheus::Exposer> exposer;
  auto collector = std::make_shared<Collector>(metrics);
  try {
    exposer = std::make_unique<prometheus::Exposer>(listen, 2);
    exposer->RegisterCollectable(collector);
  } catch (const std::exception& e) {
    report(ready_fd, std::string("error ") + e.what());
    return;
  }
  const std::vector<int> ports = exposer->GetListeningPorts();
  report(ready_fd, "ok " + std::to_string(ports.empty() ? 0 : ports.front()));
  int signal = 0;
  sigwait(&stop, &signal);
}

}  // namespace gvirtus

// The backend's Prometheus endpoint: /metrics in Prometheus's text format, served by
// prometheus-cpp (its pull library, over civetweb) in a process of its own.
//
// The daemon stays single-threaded (it forks workers, which a multi-threaded process must not do
// lightly), so the HTTP server runs in a child process that the daemon forks once it has mapped
// the session and metrics tables: every scrape reads both (and NVML, for GPU memory), and builds
// the metric families anew. Nothing is kept between scrapes, so a scrape always sees what the
// workers counted up to that moment. docs/metrics.md lists every metric and what it means.
//
// Thread affinity: collect_metric_families on any thread (civetweb's, in the metrics process).
#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "backend/metrics_table.h"
#include "protocol/status.h"

namespace gvirtus {

// Every metric family for the counters in `metrics` and the backend status `status` (its
// sessions and GPUs). Pure: the tests check it without a server.
std::vector<prometheus::MetricFamily> collect_metric_families(const MetricsTable& metrics,
                                                              const BackendStatus& status);

// The body of the metrics process: serves /metrics on `listen` ("ADDRESS:PORT", "[V6]:PORT";
// port 0 takes a free one) until SIGTERM or SIGINT, then returns. First writes one line to
// `ready_fd` and closes it: "ok PORT" once it listens, or "error REASON" (it then returns at
// once). `metrics` and the process's session table (current_session_table()) are what it reports.
void serve_metrics(const std::string& listen, const MetricsTable& metrics, int ready_fd);

}  // namespace gvirtus

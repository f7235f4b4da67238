// The backend's cumulative metrics, shared by the daemon, its workers and its metrics server.
//
// Like the session table (session_table.h), the daemon maps one shared anonymous region before it
// forks anything. Workers add to it with relaxed atomic adds (no lock, no system call on the data
// path); the metrics server (backend/metrics_server.h) reads it when Prometheus scrapes. Unlike a
// session's slot, nothing here is ever reset: these are Prometheus counters, which only grow for
// as long as the daemon lives, sessions come and go.
//
// Calls are counted per transport and per plugin. Transports are a fixed list (every communicator
// gvirtus has, kTransports); plugins are those the daemon loaded, which it names here before it
// forks (a session can open no other). A call's latency is the time from the moment the worker
// starts serving it to the moment its reply is sent (for an asynchronous call, which has no
// reply, until its handler returns): what the backend adds, the network left out.
//
// Thread affinity: name_plugin on the daemon's thread before any fork; everything else on any
// thread of any process that inherited the region. Nothing here throws after construction.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gvirtus {

// Every transport a connection can report (Connection::transport()); anything else counts as
// "other".
inline constexpr std::array<std::string_view, 6> kTransports = {"tcp",   "shm",  "rdma",
                                                                "vsock", "unix", "other"};
// Plugins the table names (core included); a daemon loading more counts the rest as "other".
inline constexpr size_t kMaxMetricsPlugins = 16;
// The row of calls to plugins the table does not name ("other").
inline constexpr size_t kOtherPluginRow = kMaxMetricsPlugins;
// The latency buckets' upper bounds, in seconds (the +Inf bucket is implied).
inline constexpr std::array<double, 16> kLatencyBoundsS = {
    5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 0.1, 0.5, 1, 5};

// What a scrape reads of one (transport, plugin) pair.
struct CallFigures {
  uint64_t calls = 0;
  uint64_t failed = 0;  // calls answered with an error
  uint64_t request_bytes = 0;
  uint64_t reply_bytes = 0;
  // Cumulative: latency_buckets[i] counts calls of at most kLatencyBoundsS[i]; the last entry
  // counts every call (+Inf).
  std::array<uint64_t, kLatencyBoundsS.size() + 1> latency_buckets{};
  uint64_t latency_sum_ns = 0;
};

// What a scrape reads of one transport.
struct TransportFigures {
  uint64_t sessions = 0;            // sessions whose handshake completed
  uint64_t auth_failures = 0;       // clients that failed to authenticate
  uint64_t refused_for_limits = 0;  // sessions turned away by limits.max_sessions
  uint64_t handshake_failures = 0;  // other handshakes that failed (bad hello, version, ...)
};

struct MetricsRegion;

class MetricsTable {
 public:
  // Maps the region (MAP_SHARED | MAP_ANONYMOUS). Throws Error on failure.
  MetricsTable();
  ~MetricsTable();
  MetricsTable(const MetricsTable&) = delete;
  MetricsTable& operator=(const MetricsTable&) = delete;

  // Daemon, before forking: the plugin with `plugin_id` is called `name` in metrics. Returns
  // false when the table has no room left (its calls then count as "other").
  bool name_plugin(uint16_t plugin_id, const std::string& name);
  // Daemon, before forking: the backend listens on `transport` (an index in kTransports), so its
  // figures are reported from the start, zeros included.
  void mark_served(size_t transport);

  // The index of `transport` in kTransports ("other" for an unknown one).
  static size_t transport_index(std::string_view transport);
  // The row of the plugin with `plugin_id`: a named one's, or kOtherPluginRow.
  size_t plugin_index(uint16_t plugin_id) const;

  // One call served: any thread of any process.
  void record_call(size_t transport, size_t plugin, uint64_t request_bytes, uint64_t reply_bytes,
                   uint64_t latency_ns, bool failed);
  void count_session(size_t transport);
  void count_auth_failure(size_t transport);
  void count_refused_for_limits(size_t transport);
  void count_handshake_failure(size_t transport);

  // Readers (the metrics server). The rows of the named plugins with their names, then
  // {kOtherPluginRow, "other"}.
  std::vector<std::pair<size_t, std::string>> plugin_rows() const;
  bool served(size_t transport) const;
  CallFigures call_figures(size_t transport, size_t plugin) const;
  TransportFigures transport_figures(size_t transport) const;

 private:
  MetricsRegion* region_;
};

// The table of this process, set by the daemon before it forks workers; null in a process with
// none (tests that run a session directly), where the functions below do nothing.
void set_current_metrics(MetricsTable* table);
MetricsTable* current_metrics();

}  // namespace gvirtus

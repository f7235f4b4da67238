#include "backend/metrics_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace gvirtus {

namespace {

constexpr size_t kPluginRows = kOtherPluginRow + 1;
constexpr size_t kBuckets = kLatencyBoundsS.size() + 1;

struct CallCell {
  std::atomic<uint64_t> calls;
  std::atomic<uint64_t> failed;
  std::atomic<uint64_t> request_bytes;
  std::atomic<uint64_t> reply_bytes;
  std::atomic<uint64_t> latency_sum_ns;
  // Per bucket, not cumulative: a call adds to one counter only.
  std::array<std::atomic<uint64_t>, kBuckets> latency;
};

struct TransportCell {
  std::atomic<uint64_t> sessions;
  std::atomic<uint64_t> auth_failures;
  std::atomic<uint64_t> refused_for_limits;
  std::atomic<uint64_t> handshake_failures;
};

struct PluginName {
  uint16_t id;
  char name[48];
};

// The bucket a latency falls in: the first bound it does not exceed, else +Inf.
size_t bucket_of(uint64_t latency_ns) {
  const double seconds = static_cast<double>(latency_ns) * 1e-9;
  const auto it = std::lower_bound(kLatencyBoundsS.begin(), kLatencyBoundsS.end(), seconds);
  return static_cast<size_t>(it - kLatencyBoundsS.begin());
}

MetricsTable* g_metrics = nullptr;

}  // namespace

// Zero-filled by mmap: every counter starts at 0 and no plugin is named.
struct MetricsRegion {
  uint32_t plugin_count;            // written by the daemon before any fork, read-only afterwards
  bool served[kTransports.size()];  // likewise
  PluginName plugins[kMaxMetricsPlugins];
  TransportCell transports[kTransports.size()];
  CallCell calls[kTransports.size()][kPluginRows];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "the region is shared between processes: its atomics must be lock-free");

MetricsTable::MetricsTable() {
  void* p = ::mmap(nullptr, sizeof(MetricsRegion), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) raise_errno("mmap of the metrics table", errno);
  region_ = static_cast<MetricsRegion*>(p);
}

MetricsTable::~MetricsTable() {
  ::munmap(region_, sizeof(MetricsRegion));
}

bool MetricsTable::name_plugin(uint16_t plugin_id, const std::string& name) {
  for (uint32_t i = 0; i < region_->plugin_count; ++i) {
    if (region_->plugins[i].id == plugin_id) return true;
  }
  if (region_->plugin_count == kMaxMetricsPlugins) return false;
  PluginName& entry = region_->plugins[region_->plugin_count++];
  entry.id = plugin_id;
  const size_t n = std::min(sizeof entry.name - 1, name.size());
  std::memcpy(entry.name, name.data(), n);
  entry.name[n] = '\0';
  return true;
}

void MetricsTable::mark_served(size_t transport) {
  if (transport < kTransports.size()) region_->served[transport] = true;
}

bool MetricsTable::served(size_t transport) const {
  return transport < kTransports.size() && region_->served[transport];
}

size_t MetricsTable::transport_index(std::string_view transport) {
  const auto it = std::find(kTransports.begin(), kTransports.end(), transport);
  return it == kTransports.end() ? kTransports.size() - 1
                                 : static_cast<size_t>(it - kTransports.begin());
}

size_t MetricsTable::plugin_index(uint16_t plugin_id) const {
  for (uint32_t i = 0; i < region_->plugin_count; ++i) {
    if (region_->plugins[i].id == plugin_id) return i;
  }
  return kOtherPluginRow;
}

void MetricsTable::record_call(size_t transport, size_t plugin, uint64_t request_bytes,
                               uint64_t reply_bytes, uint64_t latency_ns, bool failed) {
  if (transport >= kTransports.size() || plugin >= kPluginRows) return;
  CallCell& cell = region_->calls[transport][plugin];
  constexpr auto relaxed = std::memory_order_relaxed;
  cell.request_bytes.fetch_add(request_bytes, relaxed);
  cell.reply_bytes.fetch_add(reply_bytes, relaxed);
  cell.latency_sum_ns.fetch_add(latency_ns, relaxed);
  cell.latency[bucket_of(latency_ns)].fetch_add(1, relaxed);
  if (failed) cell.failed.fetch_add(1, relaxed);
  cell.calls.fetch_add(1, relaxed);
}

void MetricsTable::count_session(size_t transport) {
  if (transport < kTransports.size()) {
    region_->transports[transport].sessions.fetch_add(1, std::memory_order_relaxed);
  }
}

void MetricsTable::count_auth_failure(size_t transport) {
  if (transport < kTransports.size()) {
    region_->transports[transport].auth_failures.fetch_add(1, std::memory_order_relaxed);
  }
}

void MetricsTable::count_refused_for_limits(size_t transport) {
  if (transport < kTransports.size()) {
    region_->transports[transport].refused_for_limits.fetch_add(1, std::memory_order_relaxed);
  }
}

void MetricsTable::count_handshake_failure(size_t transport) {
  if (transport < kTransports.size()) {
    region_->transports[transport].handshake_failures.fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<std::pair<size_t, std::string>> MetricsTable::plugin_rows() const {
  std::vector<std::pair<size_t, std::string>> rows;
  for (uint32_t i = 0; i < region_->plugin_count; ++i) {
    const PluginName& entry = region_->plugins[i];
    rows.emplace_back(i, std::string(entry.name, strnlen(entry.name, sizeof entry.name)));
  }
  rows.emplace_back(kOtherPluginRow, "other");
  return rows;
}

CallFigures MetricsTable::call_figures(size_t transport, size_t plugin) const {
  CallFigures out;
  if (transport >= kTransports.size() || plugin >= kPluginRows) return out;
  const CallCell& cell = region_->calls[transport][plugin];
  constexpr auto relaxed = std::memory_order_relaxed;
  out.calls = cell.calls.load(relaxed);
  out.failed = cell.failed.load(relaxed);
  out.request_bytes = cell.request_bytes.load(relaxed);
  out.reply_bytes = cell.reply_bytes.load(relaxed);
  out.latency_sum_ns = cell.latency_sum_ns.load(relaxed);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    cumulative += cell.latency[i].load(relaxed);
    out.latency_buckets[i] = cumulative;
  }
  return out;
}

TransportFigures MetricsTable::transport_figures(size_t transport) const {
  TransportFigures out;
  if (transport >= kTransports.size()) return out;
  const TransportCell& cell = region_->transports[transport];
  constexpr auto relaxed = std::memory_order_relaxed;
  out.sessions = cell.sessions.load(relaxed);
  out.auth_failures = cell.auth_failures.load(relaxed);
  out.refused_for_limits = cell.refused_for_limits.load(relaxed);
  out.handshake_failures = cell.handshake_failures.load(relaxed);
  return out;
}

void set_current_metrics(MetricsTable* table) {
  g_metrics = table;
}

MetricsTable* current_metrics() {
  return g_metrics;
}

}  // namespace gvirtus

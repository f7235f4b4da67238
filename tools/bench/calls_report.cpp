#include "calls_report.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "json_out.h"

namespace gvirtus::bench {
namespace {

// The value below which `fraction` of the sorted samples lie (nearest rank).
double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(fraction * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(rank, sorted.size() - 1)];
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return percentile(values, 0.5);
}

struct Summary {
  double sync_median = 0, sync_p99 = 0, sync_mean = 0, sync_min = 0;
  double async_rate = 0, async_best = 0;
  double rtt_median = 0, rtt_min = 0;
  uint64_t rtt_round_trips = 0;
  double concurrent_rate = 0, concurrent_baseline_rate = 0;
  double concurrent_median = 0, concurrent_p99 = 0;
  double driver_launch_rate = 0, driver_query = 0, driver_query_unrelayed = 0;
  double driver_synchronize = 0, driver_synchronize_unrelayed = 0;
};

Summary summarise(const CallsResults& r) {
  Summary s;
  std::vector<double> sorted = r.sync_us;
  std::sort(sorted.begin(), sorted.end());
  s.sync_median = percentile(sorted, 0.5);
  s.sync_p99 = percentile(sorted, 0.99);
  s.sync_min = sorted.empty() ? 0 : sorted.front();
  s.sync_mean = sorted.empty()
                    ? 0
                    : std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size());
  std::vector<double> rates, rtts, concurrent, baseline, launches, queries, unrelayed;
  std::vector<double> synchronizes, synchronizes_unrelayed;
  s.rtt_min = r.rounds.empty() ? 0 : r.rounds.front().transport_rtt_min_us;
  for (const CallsRound& round : r.rounds) {
    rates.push_back(round.async_calls_per_s);
    rtts.push_back(round.transport_rtt_us);
    s.rtt_min = std::min(s.rtt_min, round.transport_rtt_min_us);
    s.rtt_round_trips += round.transport_round_trips;
    concurrent.push_back(round.concurrent_calls_per_s);
    baseline.push_back(round.concurrent_baseline_calls_per_s);
    launches.push_back(round.driver_launches_per_s);
    queries.push_back(round.driver_query_us);
    unrelayed.push_back(round.driver_query_unrelayed_us);
    synchronizes.push_back(round.driver_synchronize_us);
    synchronizes_unrelayed.push_back(round.driver_synchronize_unrelayed_us);
  }
  s.driver_launch_rate = median_of(launches);
  s.driver_query = median_of(queries);
  s.driver_query_unrelayed = median_of(unrelayed);
  s.driver_synchronize = median_of(synchronizes);
  s.driver_synchronize_unrelayed = median_of(synchronizes_unrelayed);
  s.concurrent_rate = median_of(concurrent);
  s.concurrent_baseline_rate = median_of(baseline);
  sorted = r.concurrent_us;
  std::sort(sorted.begin(), sorted.end());
  s.concurrent_median = percentile(sorted, 0.5);
  s.concurrent_p99 = percentile(sorted, 0.99);
  s.async_rate = median_of(rates);
  s.async_best = rates.empty() ? 0 : *std::max_element(rates.begin(), rates.end());
  s.rtt_median = median_of(rtts);
  return s;
}

}  // namespace

void print_calls_summary(std::ostream& out, const CallsResults& r) {
  const Summary s = summarise(r);
  char line[256];
  std::snprintf(line, sizeof line,
                "gvirtus-bench calls over %s: %zu round(s), %llu-byte payloads, %.1f s\n",
                r.transport.c_str(), r.rounds.size(),
                static_cast<unsigned long long>(r.payload_bytes), r.seconds);
  out << line;
  std::snprintf(line, sizeof line,
                "  sync null call (core Ping)    median %8.2f us  p99 %8.2f us  mean %8.2f us  "
                "min %8.2f us  (%zu calls)\n",
                s.sync_median, s.sync_p99, s.sync_mean, s.sync_min, r.sync_us.size());
  out << line;
  std::snprintf(
      line, sizeof line,
      "  transport round trip (%llu B)  median %8.2f us  min %8.2f us  (%llu round trips)\n",
      static_cast<unsigned long long>(r.rtt_bytes), s.rtt_median, s.rtt_min,
      static_cast<unsigned long long>(s.rtt_round_trips));
  out << line;
  std::snprintf(line, sizeof line, "  sync call / transport round trip: %.2fx\n",
                s.rtt_median > 0 ? s.sync_median / s.rtt_median : 0.0);
  out << line;
  std::snprintf(line, sizeof line,
                "  async calls (core Sink)       %10.0f calls/s median round, best %.0f  "
                "(%llu calls per round, then one sync call)\n",
                s.async_rate, s.async_best, static_cast<unsigned long long>(r.async_calls));
  out << line;
  if (!r.driver_device.empty()) {
    std::snprintf(line, sizeof line,
                  "  driver mode (%s device)  cuLaunchKernel %10.0f launches/s (async), "
                  "cuStreamQuery median %8.2f us, cuCtxSynchronize median %8.2f us (sync)\n",
                  r.driver_device.c_str(), s.driver_launch_rate, s.driver_query,
                  s.driver_synchronize);
    out << line;
    std::snprintf(line, sizeof line,
                  "  driver mode, output kept by the backend: cuStreamQuery median %8.2f us "
                  "(relaying the device's output: %.2fx), cuCtxSynchronize median %8.2f us "
                  "(%.2fx)\n",
                  s.driver_query_unrelayed, ratio(s.driver_query, s.driver_query_unrelayed),
                  s.driver_synchronize_unrelayed,
                  ratio(s.driver_synchronize, s.driver_synchronize_unrelayed));
    out << line;
  } else if (!r.driver_skipped.empty()) {
    out << "  driver mode: not measured (" << r.driver_skipped << ")\n";
  }
  if (r.clients == 0) return;
  std::snprintf(line, sizeof line,
                "  %llu clients at once          %10.0f calls/s median round (%s: %.0f, ratio "
                "%.2fx); per call median %.2f us, p99 %.2f us  (%llu calls per client)\n",
                static_cast<unsigned long long>(r.clients), s.concurrent_rate, kConcurrentBaseline,
                s.concurrent_baseline_rate, ratio(s.concurrent_rate, s.concurrent_baseline_rate),
                s.concurrent_median, s.concurrent_p99,
                static_cast<unsigned long long>(r.calls_per_client));
  out << line;
}

std::string calls_json(const CallsResults& r) {
  const Summary s = summarise(r);
  JsonWriter out;
  out.begin_object();
  out.key("mode").value("calls");
  out.key("transport").value(r.transport);
  write_run_info(out, r.run);
  out.key("quick").value(r.quick);
  out.key("seconds").value(r.seconds);
  out.key("rounds").value(static_cast<uint64_t>(r.rounds.size()));
  out.key("payload_bytes").value(r.payload_bytes);
  out.key("sync_call_us").begin_object(JsonWriter::kInline);
  out.key("median").value(s.sync_median).key("p99").value(s.sync_p99);
  out.key("mean").value(s.sync_mean).key("min").value(s.sync_min);
  out.key("calls").value(static_cast<uint64_t>(r.sync_us.size()));
  out.end_object();
  out.key("async_calls_per_s").value(s.async_rate);
  out.key("async_calls_per_s_best").value(s.async_best);
  out.key("async_calls").value(r.async_calls);
  out.key("transport_rtt_us").begin_object(JsonWriter::kInline);
  out.key("median").value(s.rtt_median).key("min").value(s.rtt_min);
  out.key("bytes").value(r.rtt_bytes).key("round_trips").value(s.rtt_round_trips);
  out.end_object();
  out.key("ratios").begin_object(JsonWriter::kInline);
  out.key("sync_call_over_transport_rtt")
      .value(s.rtt_median > 0 ? s.sync_median / s.rtt_median : 0.0);
  out.end_object();
  if (!r.driver_device.empty()) {
    out.key("driver").begin_object(JsonWriter::kInline);
    out.key("device").value(r.driver_device);
    out.key("simulated").value(r.driver_device == "simulated");
    out.key("launches_per_s").value(s.driver_launch_rate);
    out.key("sync_query_us").value(s.driver_query);
    out.key("sync_query_unrelayed_us").value(s.driver_query_unrelayed);
    out.key("query_relayed_over_unrelayed").value(ratio(s.driver_query, s.driver_query_unrelayed));
    out.key("sync_synchronize_us").value(s.driver_synchronize);
    out.key("sync_synchronize_unrelayed_us").value(s.driver_synchronize_unrelayed);
    out.key("synchronize_relayed_over_unrelayed")
        .value(ratio(s.driver_synchronize, s.driver_synchronize_unrelayed));
    out.end_object();
  } else if (!r.driver_skipped.empty()) {
    out.key("driver").begin_object(JsonWriter::kInline);
    out.key("skipped").value(r.driver_skipped);
    out.end_object();
  }
  out.key("per_round").begin_array();
  for (const CallsRound& round : r.rounds) {
    out.begin_object(JsonWriter::kInline);
    out.key("sync_median_us").value(round.sync_median_us);
    out.key("async_calls_per_s").value(round.async_calls_per_s);
    out.key("transport_rtt_us").value(round.transport_rtt_us);
    if (!r.driver_device.empty()) {
      out.key("driver_launches_per_s").value(round.driver_launches_per_s);
      out.key("driver_query_us").value(round.driver_query_us);
      out.key("driver_query_unrelayed_us").value(round.driver_query_unrelayed_us);
      out.key("driver_synchronize_us").value(round.driver_synchronize_us);
      out.key("driver_synchronize_unrelayed_us").value(round.driver_synchronize_unrelayed_us);
    }
    if (r.clients > 0) {
      out.key("concurrent_calls_per_s").value(round.concurrent_calls_per_s);
      out.key("concurrent_baseline_calls_per_s").value(round.concurrent_baseline_calls_per_s);
    }
    out.end_object();
  }
  out.end_array();
  if (r.clients > 0) {
    out.key("concurrent").begin_object();
    out.key("clients").value(r.clients);
    out.key("calls_per_client").value(r.calls_per_client);
    out.key("calls_per_s").value(s.concurrent_rate);
    out.key("call_us").begin_object(JsonWriter::kInline);
    out.key("median").value(s.concurrent_median).key("p99").value(s.concurrent_p99);
    out.end_object();
    out.key("baseline").value(kConcurrentBaseline);
    out.key("baseline_calls_per_s").value(s.concurrent_baseline_rate);
    out.key("over_baseline").value(ratio(s.concurrent_rate, s.concurrent_baseline_rate));
    out.end_object();
  }
  out.end_object();
  return out.str();
}

}  // namespace gvirtus::bench

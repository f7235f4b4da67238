// The results of `gvirtus-bench calls` and their two renderings: a summary for people and a JSON
// file for plots and comparisons between runs.
//
// JSON shape (names are stable; bench/plot.py reads them):
//   {"mode": "calls", "transport": "tcp", "commit": ..., "date": ..., "host": {...},
//    "quick": false, "seconds": 12.3, "rounds": 3, "payload_bytes": 8,
//    "sync_call_us": {"median": X, "p99": X, "mean": X, "min": X, "calls": N},
//    "async_calls_per_s": R, "async_calls_per_s_best": R, "async_calls": K,
//    "transport_rtt_us": {"median": X, "min": X, "bytes": 64, "round_trips": N},
//    "ratios": {"sync_call_over_transport_rtt": X},
//    "per_round": [{"sync_median_us": X, "async_calls_per_s": R, "transport_rtt_us": X}, ...]}
// With --clients N, also (the rates are the median round; "over_baseline" is the ratio of the
// medians, the baseline being tcp measured in the same rounds, and per_round entries gain
// "concurrent_calls_per_s" and "concurrent_baseline_calls_per_s"):
//    "concurrent": {"clients": N, "calls_per_client": M, "calls_per_s": R,
//                   "call_us": {"median": X, "p99": X}, "baseline": "tcp",
//                   "baseline_calls_per_s": R, "over_baseline": X}
// sync_call_us pools every timed call of all rounds; async_calls_per_s is the median round and
// transport_rtt_us the median of the rounds' median round trips.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "run_info.h"

namespace gvirtus::bench {

struct CallsRound {
  double sync_median_us = 0;
  double async_calls_per_s = 0;
  double transport_rtt_us = 0;  // the round's median raw round trip
  double transport_rtt_min_us = 0;
  uint64_t transport_round_trips = 0;
  double concurrent_calls_per_s = 0;           // --clients: all clients together
  double concurrent_baseline_calls_per_s = 0;  // the same over kConcurrentBaseline
  // Driver mode (gvirtus-bench-driver through gvirtus's libcuda.so.1): asynchronous
  // cuLaunchKernel rate, and the median latencies of a synchronous query (cuStreamQuery) and of
  // a synchronisation with nothing to wait for (cuCtxSynchronize).
  double driver_launches_per_s = 0;
  double driver_query_us = 0;
  double driver_synchronize_us = 0;
  // The same against a backend that keeps its workers' output ("device_output": "backend"): what
  // relaying it costs a synchronous reply (backend/output_relay.h), a query's and a
  // synchronisation's.
  double driver_query_unrelayed_us = 0;
  double driver_synchronize_unrelayed_us = 0;
};

// What the concurrent measurement of another transport is compared with, in the same round.
inline constexpr const char* kConcurrentBaseline = "tcp";

struct CallsResults {
  RunInfo run;
  // The driver-mode row's device: "simulated" (the cuda-simulated plugin: the rate of the path,
  // never GPU evidence), "gpu" (the machine's driver), or empty when the row was not measured
  // (why: driver_skipped).
  std::string driver_device;
  std::string driver_skipped;
  std::string transport;
  bool quick = false;
  double seconds = 0;
  uint64_t payload_bytes = 0;
  uint64_t rtt_bytes = 0;
  uint64_t async_calls = 0;     // per round
  std::vector<double> sync_us;  // every timed synchronous call, all rounds
  std::vector<CallsRound> rounds;
  uint64_t clients = 0;  // --clients; 0 when not measured
  uint64_t calls_per_client = 0;
  std::vector<double> concurrent_us;  // every timed call of every client, all rounds
};

void print_calls_summary(std::ostream& out, const CallsResults& results);

std::string calls_json(const CallsResults& results);

}  // namespace gvirtus::bench

// The results of `gvirtus-bench comm` and their two renderings: a table for people (with the
// transport's ratios to raw TCP per size) and a JSON file for plots and comparisons between runs.
//
// JSON shape (names are stable; plotting scripts read them):
//   {"mode": "comm", "transport": "tcp", "commit": "...", "date": "...", "host": {...},
//    "quick": false, "seconds": 41.2,
//    "points": [{"bytes": N, "rtt_us": X, "MBps": Y, "rtt_min_us": ..., "MBps_max": ...,
//                "iterations": ..., "stream_messages": ..., "stream_seconds": ...}, ...],
//    "baselines": {"raw_tcp": {"points": [...]}, "unix_socket": {"points": [...]},
//                  "memcpy_MBps": Z, "memcpy_bytes": B}}
// rtt_us is the median round trip and iterations the number of timed round trips; MBps is the
// median one-way streaming bandwidth of the batches (1e6 bytes/s), MBps_max the best batch,
// stream_messages the messages per batch and stream_seconds the time of all batches.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "channel_bench.h"
#include "run_info.h"

namespace gvirtus::bench {

struct CommResults {
  RunInfo run;
  std::string transport;
  bool quick = false;
  double seconds = 0;  // wall time of the whole run
  std::vector<Point> points;
  std::vector<Point> raw_tcp;
  std::vector<Point> unix_socket;
  double memcpy_mbps = 0;
  size_t memcpy_bytes = 0;
};

void print_comm_table(std::ostream& out, const CommResults& results);

std::string comm_json(const CommResults& results);

}  // namespace gvirtus::bench

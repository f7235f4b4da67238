// The results of `gvirtus-bench copy`: cudaMemcpy bandwidth through gvirtus per transport, beside
// the same run's raw streaming bandwidth of that transport, single-core memcpy and, on a machine
// with a GPU, the same copies natively; as a table for people and a JSON file.
//
// JSON shape (names are stable; bench/plot.py reads them):
//   {"mode": "copy", "commit": ..., "date": ..., "host": {...}, "quick": false, "seconds": X,
//    "rounds": N (per transport, the copies and the raw streaming alternated N times; each
//    figure is the median of its N rounds),
//    "device": "gpu" | "accepting device",  "gpu_evidence": true | false,
//    "accepting": "keep" | "drop" (the accepting device's mode; absent on a GPU),
//    "memcpy_mbps": [{"bytes": N, "mbps": M}, ...],
//    "native": [<point>, ...] | {"error": "no CUDA device: ..."},
//    "transports": {"tcp": {"raw_mbps": [{"bytes": N, "mbps": M}, ...],
//                           "points": [<point> + "raw_ratio", "memcpy_ratio", "native_ratio"]}
//                   | {"error": "..."}}}
// A point is {"direction": "h2d"|"d2h", "memory": "pageable"|"pinned", "bytes": N,
// "mbps": median, "mbps_max": best, "copies": per batch} (bench/copy/copy_workload.cpp); ratios
// are the copy's median over the reference at the same size (null where there is none).
// "accepting device" means the backend ran with bench/copy/accepting_device.cpp preloaded, as
// there was no GPU: the bytes travelled, but no device took them; not GPU evidence. In "keep"
// mode its memory is host memory (a copy to or from it costs a memcpy on the backend), in "drop"
// mode it does nothing with the bytes.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "run_info.h"

namespace gvirtus::bench {

struct CopyPoint {
  std::string direction;  // "h2d" or "d2h"
  std::string memory;     // "pageable" or "pinned"
  uint64_t bytes = 0;
  double mbps = 0;
  double mbps_max = 0;
  uint64_t copies = 0;
};

// Bandwidth by size, 1e6 bytes per second.
using Bandwidths = std::map<uint64_t, double>;

struct CopyTransport {
  std::string name;
  std::vector<CopyPoint> points;
  Bandwidths raw;     // the transport's own streaming bandwidth (gvirtus-bench comm's method)
  std::string error;  // set when the run over it failed
};

struct CopyResults {
  RunInfo run;
  bool quick = false;
  int rounds = 1;
  double seconds = 0;
  bool gpu = false;       // false: the remote runs used the accepting device
  std::string accepting;  // its mode then: "keep" or "drop"
  std::optional<std::vector<CopyPoint>> native;
  std::string native_error;  // why there is no native run
  Bandwidths memcpy;
  std::vector<CopyTransport> transports;
};

// The points of a workload's JSON output; Error{kInvalidInput} when it has none.
std::vector<CopyPoint> parse_copy_points(const std::string& workload_output);

void print_copy_summary(std::ostream& out, const CopyResults& results);

std::string copy_json(const CopyResults& results);

}  // namespace gvirtus::bench

// The results of `gvirtus-bench gpu`: the JSON objects gpu_workloads printed natively and through
// gvirtus over each transport, and their ratios, as a summary for people and a JSON file.
//
// JSON shape (names are stable; bench/plot.py reads them):
//   {"mode": "gpu", "commit": ..., "date": ..., "host": {...}, "quick": false, "seconds": X,
//    "device": "NVIDIA H100 ...", "native": {<gpu_workloads output>},
//    "remote": {"tcp": {<gpu_workloads output>} or {"error": "..."}, ...},
//    "ratios": {"tcp": {"saxpy_host_ms": R, "saxpy_kernel_ms": R, "matrixMul_host_ms": R,
//                       "matrixMul_kernel_ms": R, "launches_per_s": R,
//                       "memcpy_GBps": [{"bytes": N, "direction": "H2D", "memory": "pinned",
//                                        "ratio": R}, ...]}, ...}}
// Every ratio is remote / native of the named figure: above 1 means more time (ms) or more rate
// (per_s, GBps) through gvirtus than natively.
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "workload_runs.h"

namespace gvirtus::bench {

// The runs of gpu_workloads: natively and per column (TRANSPORT or TRANSPORT/driver).
using GpuResults = WorkloadRuns;

void print_gpu_summary(std::ostream& out, const GpuResults& results);

std::string gpu_json(const GpuResults& results);

}  // namespace gvirtus::bench

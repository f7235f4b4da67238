// The results of `gvirtus-bench frameworks`: the JSON objects the framework workload printed
// natively and through gvirtus over each transport, and their ratios, as a summary for people and
// a JSON file.
//
// JSON shape (names are stable; bench/plot.py reads them):
//   {"mode": "frameworks", "commit": ..., "date": ..., "host": {...}, "quick": false,
//    "seconds": X, "framework": "torch", "device": "NVIDIA H200",
//    "native": {<workload output>}, "remote": {"tcp": {<workload output>} or {"error": "..."}},
//    "ratios": {"tcp": {"first_tensor_s": R, "matmul_ms": R, "mlp_step_ms": R,
//                       "resnet18_step_ms": R, "mlp_loss_max_rel_diff": D}, ...}}
// Every ratio is remote / native of the figure (above 1: slower through gvirtus);
// mlp_loss_max_rel_diff is the largest |remote - native| / max(|native|, 1e-6) over the steps of
// the MLP's loss curve (null when the curves differ in length).
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "common/json.h"
#include "workload_runs.h"

namespace gvirtus::bench {

// The runs of the framework workload: natively and per transport.
using FrameworksResults = WorkloadRuns;

void print_frameworks_summary(std::ostream& out, const FrameworksResults& results);

std::string frameworks_json(const FrameworksResults& results);

// The largest relative difference between the two runs' MLP loss curves; NaN when either lacks
// one or their lengths differ.
double loss_curve_difference(const JsonValue& native, const JsonValue& remote);

}  // namespace gvirtus::bench

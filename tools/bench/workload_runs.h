// What the whole-stack modes (gpu, frameworks) run: a workload program once natively, then
// through gvirtus-run against a gvirtus-backend child per column (a transport, a mode), each run
// reporting one JSON object; and the parts of their reports that do not depend on the workload.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/json.h"
#include "json_out.h"
#include "run_info.h"

namespace gvirtus::bench {

struct WorkloadRuns {
  RunInfo run;
  bool quick = false;
  double seconds = 0;
  JsonValue native;                           // the workload's object
  std::map<std::string, JsonValue> remote;    // per column, when it ran
  std::map<std::string, std::string> failed;  // per column, why it did not
};

// One remote run: its column's name, the transport, the backend's plugins (JSON), gvirtus-run's
// --mode.
struct RemoteColumn {
  std::string name;
  std::string transport;
  std::string plugins;
  std::string mode;
};

// Runs `workload` (argv[0] a path) natively, then through gvirtus-run for each column, timing the
// whole. Nothing when the native run found no device (exit 2, "no CUDA device: <why>" on stderr):
// then "gvirtus-bench MODE: no CUDA device: <why>" is printed on stderr. A failed native run
// throws Error{kFailed}; a failed remote run is kept in `failed`.
std::optional<WorkloadRuns> run_workloads(const std::string& mode,
                                          const std::vector<std::string>& workload,
                                          const std::vector<RemoteColumn>& columns);

// The result file's common part: "mode", the run's facts, "quick", "seconds".
void write_runs_head(JsonWriter& out, const char* mode, const WorkloadRuns& runs);
// "native" and "remote" (each column's object, or {"error": why}).
void write_runs(JsonWriter& out, const WorkloadRuns& runs);
// The summary table's header line: figure, native, then each column and its ratio.
void print_columns_header(std::ostream& out, const WorkloadRuns& runs);

}  // namespace gvirtus::bench

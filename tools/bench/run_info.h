// What every gvirtus-bench result records about the run itself: which code, when, on what host.
// Shared by all modes so that result files from different modes can be compared and plotted.
#pragma once

#include <string>

#include "json_out.h"

namespace gvirtus::bench {

struct RunInfo {
  std::string commit;  // $GVIRTUS_COMMIT, else `git rev-parse --short HEAD`, else "unknown"
  std::string date;    // ISO-8601 UTC, e.g. "2024-05-01T12:00:00Z"
  std::string hostname;
  std::string kernel;     // uname -sr
  std::string cpu_model;  // from /proc/cpuinfo where present
  unsigned cpus = 0;      // online CPUs
  // CPUs this process may run on (sched_getaffinity): fewer than `cpus` under taskset or a
  // cgroup cpuset, which changes what a figure means (an oversubscribed run).
  unsigned usable_cpus = 0;
};

RunInfo collect_run_info();

// Writes "commit", "date" and a "host" object as members of the object being written.
void write_run_info(JsonWriter& out, const RunInfo& info);

}  // namespace gvirtus::bench

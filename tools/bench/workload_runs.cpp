#include "workload_runs.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "backend_child.h"
#include "bench_transports.h"
#include "common/error.h"
#include "common/paths.h"
#include "json_values.h"
#include "program_run.h"

namespace gvirtus::bench {

std::optional<WorkloadRuns> run_workloads(const std::string& mode,
                                          const std::vector<std::string>& workload,
                                          const std::vector<RemoteColumn>& columns) {
  const auto start = std::chrono::steady_clock::now();
  std::string command;
  for (const std::string& word : workload) command += (command.empty() ? "" : " ") + word;
  std::cerr << "gvirtus-bench " << mode << ": native run of " << command << "...\n";
  const ProgramRun native = run_program(workload);
  // Workloads report a missing device (no driver, no GPU, none visible) on their own.
  constexpr std::string_view kNoDevice = "no CUDA device: ";
  if (const auto at = native.err.find(kNoDevice); native.status == 2 && at != std::string::npos) {
    std::cerr << "gvirtus-bench " << mode << ": " << first_line(native.err.substr(at)) << "\n";
    return std::nullopt;
  }
  WorkloadRuns runs;
  runs.run = collect_run_info();
  runs.native = workload_result(native, "the native run");
  const std::string gvirtus_run = (executable_dir() / "gvirtus-run").string();
  for (const RemoteColumn& column : columns) {
    std::cerr << "gvirtus-bench " << mode << ": run through gvirtus over " << column.transport
              << " in " << column.mode << " mode...\n";
    try {
      BackendChild backend(*find_bench_transport(column.transport), column.plugins);
      std::vector<std::string> argv = {
          gvirtus_run, "--mode", column.mode, "--config", backend.client_config_file(), "--"};
      argv.insert(argv.end(), workload.begin(), workload.end());
      runs.remote[column.name] = workload_result(run_program(argv), "the run over " + column.name);
    } catch (const Error& e) {
      std::cerr << "gvirtus-bench " << mode << ": over " << column.name << ": " << e.what() << "\n";
      runs.failed[column.name] = e.what();
    }
  }
  runs.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return runs;
}

void write_runs_head(JsonWriter& out, const char* mode, const WorkloadRuns& runs) {
  out.key("mode").value(mode);
  write_run_info(out, runs.run);
  out.key("quick").value(runs.quick);
  out.key("seconds").value(runs.seconds);
}

void write_runs(JsonWriter& out, const WorkloadRuns& runs) {
  out.key("native");
  write_value(out, runs.native);
  out.key("remote").begin_object();
  for (const auto& [name, value] : runs.remote) {
    out.key(name);
    write_value(out, value);
  }
  for (const auto& [name, why] : runs.failed) {
    out.key(name).begin_object(JsonWriter::kInline).key("error").value(why).end_object();
  }
  out.end_object();
}

void print_columns_header(std::ostream& out, const WorkloadRuns& runs) {
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %12s", "figure", "native");
  out << line;
  for (const auto& [name, value] : runs.remote) {
    std::snprintf(line, sizeof line, " %12s %7s", name.c_str(), "ratio");
    out << line;
  }
  out << "\n";
}

}  // namespace gvirtus::bench

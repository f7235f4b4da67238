#include "frameworks_mode.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bench_args.h"
#include "common/paths.h"
#include "frameworks_report.h"
#include "json_out.h"
#include "mode_args.h"

namespace gvirtus::bench {
namespace {

struct FrameworksOptions : WorkloadOptions {
  std::string script;  // empty: the source tree's bench/frameworks/torch_workload.py
  std::string python = "python3";
};

FrameworksOptions parse_options(std::span<char* const> args) {
  FrameworksOptions o;
  parse_workload_options("frameworks", args, o, [&](std::string_view arg, NextValue next) {
    if (arg == "--script") {
      o.script = next();
    } else if (arg == "--python") {
      o.python = next();
    } else {
      return false;
    }
    return true;
  });
  if (o.script.empty()) o.script = GVIRTUS_SOURCE_DIR "/bench/frameworks/torch_workload.py";
  if (!std::filesystem::exists(o.script)) {
    throw UsageError("frameworks: no " + o.script + " (name the workload with --script)");
  }
  return o;
}

// `name` as a path to run: itself when it names a directory, else the first executable of that
// name on PATH (the runs use execv, which does not search).
std::string interpreter_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    dirs = colon == std::string_view::npos ? "" : dirs.substr(colon + 1);
  }
  throw UsageError("frameworks: no " + name + " on PATH (name the interpreter with --python)");
}

void print_help() {
  std::cout
      << "usage: gvirtus-bench frameworks [--transport NAME]... [--json FILE] [--quick]\n"
         "                                [--script PATH] [--python PATH]\n"
         "Runs a framework workload (bench/frameworks/torch_workload.py: time to the first\n"
         "CUDA tensor, a 1024x1024 matmul, an MLP and a ResNet-18 training step, the MLP's\n"
         "loss curve) natively, then through gvirtus-run in driver mode against a\n"
         "gvirtus-backend it starts per transport, and prints remote/native ratios and how far\n"
         "the loss curve strays from native.\n\n"
         "  --transport NAME  a transport to measure (repeatable; default tcp and shm; can: "
      << bench_transport_list()
      << ")\n"
         "  --json FILE       also write every run's figures and the ratios to FILE\n"
         "  --quick           50 MLP steps and fewer repetitions\n"
         "  --script PATH     the workload (default: the source tree's torch_workload.py)\n"
         "  --python PATH     the interpreter (default python3, from PATH; its packages are\n"
         "                    the framework measured)\n"
         "Exit status: 0 on success, 1 when a run fails, 2 on bad usage or when there is\n"
         "no CUDA device (\"no CUDA device: <why>\").\n";
}

}  // namespace

int run_frameworks_mode(std::span<char* const> args) {
  if (wants_help(args)) {
    print_help();
    return 0;
  }
  const FrameworksOptions o = parse_options(args);
  std::vector<std::string> workload = {interpreter_path(o.python), o.script};
  if (o.quick) workload.push_back("--quick");
  std::vector<RemoteColumn> columns;
  for (const std::string& transport : o.transports) {
    columns.push_back({transport, transport, R"(["cudart", "cuda"])", "driver"});
  }
  auto runs = run_workloads("frameworks", workload, columns);
  if (!runs) return 2;
  FrameworksResults& results = *runs;
  results.quick = o.quick;
  print_frameworks_summary(std::cout, results);
  if (!o.json_path.empty()) {
    write_file(o.json_path, frameworks_json(results));
    std::cout << "results written to " << o.json_path << "\n";
  }
  return results.failed.empty() ? 0 : 1;
}

}  // namespace gvirtus::bench

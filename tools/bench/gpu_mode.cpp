#include "gpu_mode.h"

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bench_args.h"
#include "common/paths.h"
#include "gpu_report.h"
#include "json_out.h"
#include "mode_args.h"

namespace gvirtus::bench {
namespace {

struct GpuOptions : WorkloadOptions {
  std::vector<std::string> modes;  // gvirtus-run's: runtime (default), driver
  std::string program;             // empty: bin/gpu_workloads beside this tool
};

GpuOptions parse_options(std::span<char* const> args) {
  GpuOptions o;
  parse_workload_options("gpu", args, o, [&](std::string_view arg, NextValue next) {
    if (arg == "--program") {
      o.program = next();
    } else if (arg == "--mode") {
      const std::string mode(next());
      if (mode != "runtime" && mode != "driver") {
        throw UsageError("gpu: --mode is runtime or driver, not \"" + mode + "\"");
      }
      o.modes.push_back(mode);
    } else {
      return false;
    }
    return true;
  });
  if (o.modes.empty()) o.modes = {"runtime"};
  if (o.program.empty()) {
    // Beside this tool in the build tree; <prefix>/libexec/gvirtus once installed.
    const auto installed = executable_dir() / ".." / "libexec" / "gvirtus" / "gpu_workloads";
    o.program = std::filesystem::exists(installed) ? installed.lexically_normal().string()
                                                   : (executable_dir() / "gpu_workloads").string();
  }
  if (!std::filesystem::exists(o.program)) {
    throw UsageError("gpu: no " + o.program +
                     " (it is built with the CUDA toolkit: bench/gpu/gpu_workloads.cu)");
  }
  return o;
}

void print_help() {
  std::cout
      << "usage: gvirtus-bench gpu [--transport NAME]... [--mode MODE]... [--json FILE]\n"
         "                         [--quick] [--program PATH]\n"
         "Runs the GPU workloads (saxpy, matrixMul, H2D/D2H bandwidth pageable and pinned\n"
         "1 KiB..1 GiB, empty-kernel launch rate) natively, then through gvirtus-run against\n"
         "a gvirtus-backend it starts per transport and mode, and prints remote/native ratios.\n\n"
         "  --transport NAME  a transport to measure (repeatable; default tcp and shm; can: "
      << bench_transport_list()
      << ")\n"
         "  --mode MODE       gvirtus-run's mode (repeatable; default runtime; can: runtime,\n"
         "                    driver - NVIDIA's runtime on gvirtus's libcuda.so.1, whose\n"
         "                    columns are named TRANSPORT/driver)\n"
         "  --json FILE       also write every run's figures and the ratios to FILE\n"
         "  --quick           shorter workloads (copies up to 16 MiB, 10000 launches)\n"
         "  --program PATH    the workload program (default bin/gpu_workloads)\n"
         "Exit status: 0 on success, 1 when a run fails, 2 on bad usage or when there is\n"
         "no CUDA device (\"no CUDA device: <error name>\").\n";
}

}  // namespace

int run_gpu_mode(std::span<char* const> args) {
  if (wants_help(args)) {
    print_help();
    return 0;
  }
  const GpuOptions o = parse_options(args);
  std::vector<std::string> program = {o.program};
  if (o.quick) program.push_back("--quick");
  std::vector<RemoteColumn> columns;
  for (const std::string& transport : o.transports) {
    for (const std::string& mode : o.modes) {
      const bool driver = mode == "driver";
      columns.push_back({driver ? transport + "/driver" : transport, transport,
                         driver ? R"(["cudart", "cuda"])" : R"(["cudart"])", mode});
    }
  }
  auto runs = run_workloads("gpu", program, columns);
  if (!runs) return 2;
  GpuResults& results = *runs;
  results.quick = o.quick;
  print_gpu_summary(std::cout, results);
  if (!o.json_path.empty()) {
    write_file(o.json_path, gpu_json(results));
    std::cout << "results written to " << o.json_path << "\n";
  }
  return results.failed.empty() ? 0 : 1;
}

}  // namespace gvirtus::bench

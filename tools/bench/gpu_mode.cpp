#include "gpu_mode.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "backend_child.h"
#include "bench_args.h"
#include "common/error.h"
#include "common/json.h"
#include "common/paths.h"
#include "gpu_report.h"
#include "json_out.h"
#include "mode_args.h"

namespace gvirtus::bench {
namespace {

struct GpuOptions {
  std::vector<std::string> transports;  // empty: tcp and shm (the transports of one GPU machine)
  std::vector<std::string> modes;       // gvirtus-run's: runtime (default), driver
  std::string json_path;
  std::string program;  // empty: bin/gpu_workloads beside this tool
  bool quick = false;
};

GpuOptions parse_options(std::span<char* const> args) {
  GpuOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    auto next = [&]() -> std::string_view {
      if (i + 1 >= args.size()) throw UsageError(std::string(arg) + " needs a value");
      return args[++i];
    };
    if (arg == "--transport") {
      o.transports.emplace_back(choose_bench_transport("gpu", std::string(next())).name);
    } else if (arg == "--json") {
      o.json_path = next();
    } else if (arg == "--program") {
      o.program = next();
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--mode") {
      const std::string mode(next());
      if (mode != "runtime" && mode != "driver") {
        throw UsageError("gpu: --mode is runtime or driver, not \"" + mode + "\"");
      }
      o.modes.push_back(mode);
    } else {
      throw UsageError("gpu: unknown argument \"" + std::string(arg) + "\"");
    }
  }
  // vsock and rdma need a guest or RDMA hardware: measured when asked for with --transport.
  if (o.transports.empty()) o.transports = {"tcp", "shm"};
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
  check_output_path("--json", o.json_path);
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

struct ProgramRun {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

// Runs `argv` and collects its stdout (through a pipe) and stderr (through an unlinked file, so
// that neither stream can block the other). Blocks until the program exits.
ProgramRun run_program(const std::vector<std::string>& argv) {
  char err_path[] = "/tmp/gvirtus-bench-gpu-XXXXXX";
  const int err_fd = ::mkstemp(err_path);
  if (err_fd < 0) raise_errno("mkstemp", errno);
  ::unlink(err_path);
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) raise_errno("pipe2", errno);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::perror(args[0]);
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ProgramRun run;
  char buffer[65536];
  for (ssize_t n; (n = ::read(out_pipe[0], buffer, sizeof buffer)) != 0;) {
    if (n > 0) run.out.append(buffer, static_cast<size_t>(n));
    if (n < 0 && errno != EINTR) break;
  }
  ::close(out_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ::lseek(err_fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(err_fd, buffer, sizeof buffer)) > 0;) run.err.append(buffer, n);
  ::close(err_fd);
  return run;
}

// The JSON object a successful run printed; Error{kFailed} with the program's stderr otherwise.
JsonValue workloads_result(const ProgramRun& run, const std::string& what) {
  if (run.status != 0) {
    raise(ErrorKind::kFailed, what + " exited with status " + std::to_string(run.status) +
                                  (run.err.empty() ? "" : ": " + run.err));
  }
  return parse_json(run.out, what + " output");
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

int run_gpu_mode(std::span<char* const> args) {
  if (wants_help(args)) {
    print_help();
    return 0;
  }
  const GpuOptions o = parse_options(args);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> program = {o.program};
  if (o.quick) program.push_back("--quick");

  std::cerr << "gvirtus-bench gpu: native run of " << o.program << "...\n";
  const ProgramRun native = run_program(program);
  // The workloads report a missing device (no driver, no GPU, none visible) on their own.
  if (native.status == 2 && native.err.rfind("no CUDA device: ", 0) == 0) {
    std::cerr << "gvirtus-bench gpu: " << first_line(native.err) << "\n";
    return 2;
  }
  GpuResults results;
  results.run = collect_run_info();
  results.quick = o.quick;
  results.native = workloads_result(native, "the native run");

  const std::string gvirtus_run = (executable_dir() / "gvirtus-run").string();
  for (const std::string& transport : o.transports) {
    for (const std::string& mode : o.modes) {
      const bool driver = mode == "driver";
      const std::string name = driver ? transport + "/driver" : transport;
      std::cerr << "gvirtus-bench gpu: run through gvirtus over " << transport << " in " << mode
                << " mode...\n";
      try {
        BackendChild backend(*find_bench_transport(transport),
                             driver ? R"(["cudart", "cuda"])" : R"(["cudart"])");
        std::vector<std::string> argv = {
            gvirtus_run, "--mode", mode, "--config", backend.client_config_file(), "--"};
        argv.insert(argv.end(), program.begin(), program.end());
        results.remote[name] = workloads_result(run_program(argv), "the run over " + name);
      } catch (const Error& e) {
        std::cerr << "gvirtus-bench gpu: over " << name << ": " << e.what() << "\n";
        results.failed[name] = e.what();
      }
    }
  }
  results.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print_gpu_summary(std::cout, results);
  if (!o.json_path.empty()) {
    write_file(o.json_path, gpu_json(results));
    std::cout << "results written to " << o.json_path << "\n";
  }
  return results.failed.empty() ? 0 : 1;
}

}  // namespace gvirtus::bench

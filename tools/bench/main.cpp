// gvirtus-bench: gvirtus's benchmarks, one mode per question (DESIGN.md section 10).
//
//   gvirtus-bench comm --transport tcp --json comm.json     transport vs raw sockets and memcpy
//   gvirtus-bench calls --transport tcp --json calls.json   call rate through client and backend
//   gvirtus-bench copy --json copy.json                     cudaMemcpy vs raw transport
//   gvirtus-bench gpu --json gpu.json                       GPU workloads, native vs remoted
//
// Each mode parses its own arguments and prints a table; --json keeps the results for plots.
// A new mode is one entry in kModes.
#include <cstring>
#include <exception>
#include <iostream>
#include <span>
#include <string>
#include <string_view>

#include "bench_args.h"
#include "calls_mode.h"
#include "comm_mode.h"
#include "common/error.h"
#include "copy_mode.h"
#include "frameworks_mode.h"
#include "gpu_mode.h"
#include "pool_mode.h"

namespace {

struct Mode {
  const char* name;
  const char* summary;
  int (*run)(std::span<char* const> args);  // the arguments after the mode's name
};

constexpr Mode kModes[] = {
    {"comm", "transport latency and bandwidth vs raw TCP, Unix sockets and memcpy",
     gvirtus::bench::run_comm_mode},
    {"calls", "synchronous and asynchronous call rate through a real client and backend",
     gvirtus::bench::run_calls_mode},
    {"copy", "cudaMemcpy bandwidth per transport vs its raw streaming and memcpy",
     gvirtus::bench::run_copy_mode},
    {"gpu", "GPU workloads natively and through gvirtus over each transport",
     gvirtus::bench::run_gpu_mode},
    {"frameworks", "a PyTorch workload natively and through gvirtus over each transport",
     gvirtus::bench::run_frameworks_mode},
    {"pool", "copies between two backends of a pool: direct vs relayed through the client",
     gvirtus::bench::run_pool_mode},
};

void print_help() {
  std::cout << "usage: gvirtus-bench MODE [options]   (gvirtus-bench MODE --help for options)\n"
               "modes:\n";
  for (const Mode& mode : kModes) std::cout << "  " << mode.name << "  " << mode.summary << "\n";
  std::cout << "Exit status: 0 on success, 1 when the system measured fails, 2 on bad usage.\n";
}

int usage_error(std::string_view why) {
  std::cerr << "gvirtus-bench: " << why << "\nTry 'gvirtus-bench --help'.\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error("no mode given");
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_help();
    return 0;
  }
  for (const Mode& mode : kModes) {
    if (name != mode.name) continue;
    try {
      return mode.run(std::span<char* const>(argv + 2, static_cast<size_t>(argc - 2)));
    } catch (const gvirtus::bench::UsageError& e) {
      return usage_error(e.what());
    } catch (const gvirtus::Error& e) {
      std::cerr << "gvirtus-bench " << mode.name << ": " << gvirtus::to_string(e.kind()) << ": "
                << e.what() << "\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "gvirtus-bench " << mode.name << ": " << e.what() << "\n";
      return 1;
    }
  }
  return usage_error("unknown mode \"" + std::string(name) + "\"");
}

// Argument helpers shared by the whole-stack modes (calls, gpu, frameworks): choosing a bench
// transport by name, checking an output path before minutes of measuring, and the options the
// workload modes share. Bad usage throws UsageError.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench_transports.h"
#include "common/function_ref.h"

namespace gvirtus::bench {

// The bench transport called `name`; UsageError naming `mode` and the transports it can set up.
const BenchTransport& choose_bench_transport(std::string_view mode, const std::string& name);

// "tcp, shm": the transports the bench can set up, for --help and errors.
std::string bench_transport_list();

// UsageError unless the directory that would hold `path` exists (an empty path is fine).
void check_output_path(std::string_view option, const std::string& path);

// Whether "--help" is among `args`.
bool wants_help(std::span<char* const> args);

// The options the workload modes (gpu, frameworks) share.
struct WorkloadOptions {
  std::vector<std::string> transports;  // --transport, repeatable; default tcp and shm
  std::string json_path;                // --json
  bool quick = false;                   // --quick
};

// Walks `args`: the shared options into `common`, any other to `own(arg, next)`, which returns
// whether it took it (`next()` gives the option's value, or throws UsageError when there is
// none). An option neither takes is a UsageError naming `mode`. Then the transports default to
// tcp and shm (vsock and rdma need a guest or RDMA hardware: measured when asked for), and the
// JSON path is checked.
using NextValue = FunctionRef<std::string_view()>;
void parse_workload_options(std::string_view mode, std::span<char* const> args,
                            WorkloadOptions& common,
                            FunctionRef<bool(std::string_view arg, NextValue next)> own);

}  // namespace gvirtus::bench

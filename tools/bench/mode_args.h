// Argument helpers shared by the whole-stack modes (calls, gpu): choosing a bench transport by
// name and checking an output path before minutes of measuring. Bad usage throws UsageError.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "bench_transports.h"

namespace gvirtus::bench {

// The bench transport called `name`; UsageError naming `mode` and the transports it can set up.
const BenchTransport& choose_bench_transport(std::string_view mode, const std::string& name);

// "tcp, shm": the transports the bench can set up, for --help and errors.
std::string bench_transport_list();

// UsageError unless the directory that would hold `path` exists (an empty path is fine).
void check_output_path(std::string_view option, const std::string& path);

// Whether "--help" is among `args`.
bool wants_help(std::span<char* const> args);

}  // namespace gvirtus::bench

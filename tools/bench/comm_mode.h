// `gvirtus-bench comm`: a transport's ping-pong latency and streaming bandwidth from 1 B to
// 64 MiB, beside raw TCP, Unix sockets and memcpy measured in the same run (DESIGN.md section 10).
// Both ends run in this process; no backend is needed.
#pragma once

#include <span>

namespace gvirtus::bench {

// `args` are the arguments after "comm". Returns the exit status; throws UsageError for bad
// usage and gvirtus::Error when the transport fails.
int run_comm_mode(std::span<char* const> args);

// The mode's --help text.
void print_comm_help();

}  // namespace gvirtus::bench

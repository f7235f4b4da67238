// `gvirtus-bench pool`: copies between two backends of a client's pool (docs/cluster.md), direct
// (the source's backend sends to the destination's over tcp) against relayed (through the
// client), in the same run: two gvirtus-backend children on loopback tcp, each with one device
// (the machine's GPU with NVIDIA's driver, else the simulated device, which the results name),
// and gvirtus-bench-peer timing cuMemcpyPeer from one to the other at each size, with
// GVIRTUS_POOL_COPIES=relayed and without; every copied byte is checked. Prints a table with the
// ratio direct / relayed and writes JSON with --json.
#pragma once

#include <span>

namespace gvirtus::bench {

// `args` are the arguments after "pool". Returns the exit status; throws UsageError for bad
// usage and gvirtus::Error when the stack fails.
int run_pool_mode(std::span<char* const> args);

}  // namespace gvirtus::bench

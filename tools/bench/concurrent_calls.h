// `gvirtus-bench calls --clients N`: many co-located applications at once. N clients, each in
// its own thread with its own session (its own worker process in the backend), make synchronous
// null calls (core Ping) as fast as they can. With more clients than cores, how a transport waits
// decides the rate: a side that spins holds the core its peer needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_transports.h"

namespace gvirtus::bench {

struct ConcurrentCalls {
  double seconds = 0;           // from the common start to the last client's last answer
  double calls_per_s = 0;       // every client's calls together
  std::vector<double> call_us;  // every timed call's duration
};

// Starts a backend on `transport`, connects `clients` clients (each warmed up with a few calls),
// then has them all make `calls_per_client` synchronous calls with `payload_bytes` at once.
// Throws gvirtus::Error when a client fails or a call returns the wrong bytes.
ConcurrentCalls measure_concurrent_calls(const BenchTransport& transport, uint64_t clients,
                                         uint64_t calls_per_client, size_t payload_bytes);

}  // namespace gvirtus::bench

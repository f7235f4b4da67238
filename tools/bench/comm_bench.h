// Connects a gvirtus transport to itself through the Communicator interface only: the bench serves
// and connects both ends in this process, and the channel measurement (channel_bench.h) runs over
// the connection exactly as it runs over the raw-socket baselines.
#pragma once

#include <cstddef>

#include "bench_transports.h"
#include "channel_bench.h"

namespace gvirtus::bench {

// Both ends of one connection of `transport`, able to carry messages of `largest` bytes. Throws
// gvirtus::Error when the transport cannot be set up.
ChannelPair connect_comm_pair(const BenchTransport& transport, size_t largest);

}  // namespace gvirtus::bench

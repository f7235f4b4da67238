// The reference points every transport is compared against, measured in the same run:
//   raw_tcp      plain blocking TCP sockets on loopback (TCP_NODELAY), fixed-size messages with no
//                framing: write N bytes, read exactly N bytes; the floor for the tcp transport.
//   unix_socket  an AF_UNIX SOCK_STREAM socket pair, same method; the floor for intra-node IPC.
//   memcpy       single-core memcpy bandwidth between two large buffers; the ceiling for any
//                transport that copies once (shm).
// The socket baselines go through the same measurement as the communicators (channel_bench.h).
#pragma once

#include <cstddef>

#include "channel_bench.h"

namespace gvirtus::bench {

// Both ends of a connected socket pair as message channels. Throws gvirtus::Error when the
// sockets cannot be set up.
ChannelPair raw_tcp_pair();
ChannelPair unix_socket_pair();

// The best of `repeats` memcpy()s of `bytes` between two buffers faulted in beforehand, in 1e6
// bytes copied per second.
double memcpy_mbps(size_t bytes, int repeats);

}  // namespace gvirtus::bench

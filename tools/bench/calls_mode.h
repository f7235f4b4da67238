// `gvirtus-bench calls`: the call rate through the whole stack (DESIGN.md section 10) — the real
// Client against a real gvirtus-backend child over one transport, beside the raw round trip of
// the same communicator measured in the same run:
//   sync_call_us       a synchronous null call (core Ping, 8-byte payload), each one timed;
//   async_calls_per_s  core Sink calls sent back to back, then one synchronous call to drain;
//   transport_rtt_us   the comm mode's 64-byte ping-pong over the same transport, no backend.
// The run is split into rounds (a fresh backend each), so a drifting host hits all three alike.
#pragma once

#include <span>

namespace gvirtus::bench {

// `args` are the arguments after "calls". Returns the exit status; throws UsageError for bad
// usage and gvirtus::Error when the stack fails.
int run_calls_mode(std::span<char* const> args);

}  // namespace gvirtus::bench

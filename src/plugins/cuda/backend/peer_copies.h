// Direct copies between two backends of a client's pool (docs/cluster.md): the source's backend
// sends the bytes of one of its session's device ranges straight to the destination's backend over
// tcp, instead of through the client. The client drives both (common/driver_wire.h's PeerToken):
//
//   destination  gvirtusPeerReceiveOpen{range}  -> a listening socket: its port and a token
//   destination  gvirtusPeerReceive{token}       -> accepts, checks the token, writes the range
//   source       gvirtusPeerSend{range, port, token, host} -> connects, sends token, count, bytes
//
// Every input is the client's: the ranges are vetted as the session's device memory, the host is
// where the session's own client says (a backend sends nothing but that session's memory), the
// token (32 bytes from getrandom) is the only key to a listening socket, which takes one sender
// that presents it within kPeerWaitMs (connections with another token are closed and the wait
// goes on) and is closed after. At most kMaxPeerReceivers are open at once per session; one never
// received is closed at the session's next open after its wait has passed.
#pragma once

#include <cuda.h>

#include <chrono>
#include <cstddef>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

inline constexpr auto kPeerWait = std::chrono::seconds(30);
inline constexpr size_t kMaxPeerReceivers = 16;

// Serves the three rows; false for another row.
bool run_peer_copy(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

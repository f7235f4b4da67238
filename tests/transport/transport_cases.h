// The communicators the conformance suite runs against. Each case knows how to make a listening
// endpoint and a client for it, and an endpoint nobody listens on. Adding a transport to the
// suite means adding one case here; the tests themselves never ask which transport they hold.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "communicators/communicator.h"

namespace gvirtus::testing {

struct ServedEndpoint {
  std::unique_ptr<Listener> listener;
  std::unique_ptr<Communicator> client;  // connects to `listener`
};

struct TransportCase {
  std::string name;
  // A listener plus a client for it; `max_message_bytes` bounds what either side accepts.
  std::function<ServedEndpoint(size_t max_message_bytes)> serve;
  // A client for an endpoint where nothing listens (connection refused).
  std::function<std::unique_ptr<Communicator>()> unreachable;
};

// Every case available here: tcp and shm always, vsock and rdma where the machine has them (see
// transport_cases.cpp); GVIRTUS_TEST_TRANSPORTS narrows the list and makes its names mandatory.
std::vector<TransportCase> transport_cases();
// The cases that need nothing from the machine (tcp, shm).
std::vector<TransportCase> builtin_cases();

// `bytes` of a xorshift pattern that `seed` selects: different messages differ everywhere.
std::vector<std::byte> pattern(size_t bytes, uint32_t seed);
// Sends `data` as one message of one piece.
void send_one(Connection& c, ByteView data);

// Shows the case's name in test output instead of its bytes.
inline void PrintTo(const TransportCase& c, std::ostream* out) {
  *out << c.name;
}

}  // namespace gvirtus::testing

// The vsock communicator: AF_VSOCK stream sockets between a VM and its host (QEMU/KVM with
// vhost-vsock, Firecracker, Kata), or within one machine over vsock_loopback. It shares the
// stream code (framing, gather sends, the listener) with tcp; only addresses differ.
//
// properties.json endpoint fields:
//   "suite": "vsock", "protocol": "vsock"
//   "cid":  the context id a client connects to: a number, or "host" (2, the default: a guest
//           reaching the backend on its host) or "local" (1, loopback on one machine).
//   "port": the vsock port, 0-4294967294 (string or number); a backend given 0 picks one.
//   "listen_cid": the context id the backend binds: "any" (the default; every guest of this host
//           may connect), "local", "host" or a number.
#pragma once

#include <cstdint>
#include <string>

#include "communicators/factory.h"

namespace gvirtus {

struct VsockAddress {
  uint32_t cid = 2;  // VMADDR_CID_HOST
  uint32_t port = 0;
  uint32_t listen_cid = ~0u;  // VMADDR_CID_ANY
};

// The vsock transport's factory entry.
TransportInfo vsock_transport_info();

// A vsock communicator for a given address, for tools that have no config file.
std::unique_ptr<Communicator> make_vsock_communicator(
    VsockAddress address, size_t max_message_bytes = kDefaultMaxMessageBytes);

// Whether this machine can open AF_VSOCK sockets at all (the module may be missing).
bool vsock_available();

}  // namespace gvirtus

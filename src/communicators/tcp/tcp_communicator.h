// The tcp communicator: IPv4 and IPv6 stream sockets, the universal default transport.
//
// properties.json endpoint fields (GVirtuS's names):
//   "suite": "tcp/ip", "protocol": "tcp"
//   "server_address": host name or address to listen on / connect to; default "127.0.0.1".
//                     IPv6 literals may be bracketed ("[::1]"). "0.0.0.0" or "::" listen
//                     everywhere.
//   "port": "9999" (string or integer); 0 lets the backend pick a free port (it logs which).
// Connections use TCP_NODELAY (every frame is latency-bound) and keep the kernel's buffer
// autotuning, which outperforms fixed SO_SNDBUF/SO_RCVBUF sizes on Linux.
#pragma once

#include <cstdint>
#include <string>

#include "communicators/factory.h"

namespace gvirtus {

struct TcpAddress {
  std::string host;  // without brackets
  uint16_t port = 0;
};

// The tcp transport's factory entry.
TransportInfo tcp_transport_info();

// A tcp communicator for a given address, for tools that have no config file.
std::unique_ptr<Communicator> make_tcp_communicator(
    TcpAddress address, size_t max_message_bytes = kDefaultMaxMessageBytes);

}  // namespace gvirtus

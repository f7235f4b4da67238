// The rdma communicator's endpoint fields (properties.json), with their defaults.
//
//   "suite": "infiniband-rdma", "protocol": "ib"   (GVirtuS's names; "rdma"/"rdma" also accepted)
//   "server_address": the IP address of an RDMA-capable interface (IPoIB or RoCE netdev);
//                     default "127.0.0.1" only makes sense with Soft-RoCE on loopback.
//   "port": rdma_cm port (string or integer); 0 lets the backend pick one.
//   "slots", "slot_bytes": the receive window each side offers its peer: `slots` landing buffers
//                     of `slot_bytes` each (default 64 x 64 KiB = 4 MiB per direction).
//   "completion": "poll" (default: busy-poll completions for spin_us, then sleep on the
//                     completion channel) or "block" (sleep at once; lowest CPU use).
//   "spin_us": how long "poll" spins before sleeping (default 20000); "block" uses 0.
//   "max_registered_bytes": bound on memory pinned by register_memory() (default 1 GiB).
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"

namespace gvirtus::rdma {

struct RdmaOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  uint32_t slots = 64;
  uint32_t slot_bytes = 64 * 1024;
  uint32_t spin_us = 20000;
  uint64_t max_registered_bytes = uint64_t{1} << 30;
};

// Reads and checks an endpoint's fields; errors name the file and the field.
RdmaOptions parse_rdma_options(const EndpointConfig& endpoint);

}  // namespace gvirtus::rdma

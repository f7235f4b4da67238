// Chooses the communicator of an endpoint from its "suite"/"protocol" in properties.json.
//
// Built-in transports (tcp, shm, vsock) are listed in factory.cpp; transports with
// heavy runtime dependencies (rdma) live in plugins,
// libgvirtus-comm-<name>.so, loaded from the communicator directory only when an endpoint names
// them, so the core never needs their libraries at run time. No client input ever names a plugin
// file: only the operator's configuration does.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "communicators/communicator.h"

namespace gvirtus {

// Builds a communicator for an endpoint; `max_message_bytes` bounds what it accepts from a peer.
using CommunicatorMaker =
    std::function<std::unique_ptr<Communicator>(const EndpointConfig&, size_t max_message_bytes)>;

struct TransportInfo {
  std::string name;                    // "tcp": the key used in logs, benchmarks, plugin names
  std::vector<std::string> suites;     // accepted "suite" values: "tcp/ip", "tcp"
  std::vector<std::string> protocols;  // accepted "protocol" values: "tcp"
  CommunicatorMaker make;
};

// Adds a transport beside the built-in ones (used by communicator plugins and tests).
void register_transport(TransportInfo info);

// Builds the communicator for an endpoint. An unknown suite/protocol pair is an error naming the
// config file, the field and the known transports.
std::unique_ptr<Communicator> make_communicator(const EndpointConfig& endpoint,
                                                size_t max_message_bytes = kDefaultMaxMessageBytes);

// The entry point a communicator plugin exports. It registers its transports through the
// registrar it is given (register_transport of the loading program: plugins link their own copy
// of the common code, and executables export none of theirs).
using TransportRegistrar = void(TransportInfo);
using CommunicatorPluginEntry = void(TransportRegistrar*);
inline constexpr const char* kCommunicatorPluginEntry = "gvirtus_register_communicator";

// Names of the registered transports, for --help and error messages.
std::vector<std::string> transport_names();

}  // namespace gvirtus

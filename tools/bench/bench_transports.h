// How gvirtus-bench builds both ends of a gvirtus transport inside one process.
//
// Communicators come from the same factory as in the backend and the stub (an endpoint object of
// properties.json through parse_config() and make_communicator()), so the bench measures exactly
// what users run. What the factory cannot know is how to pick a free local address for a server
// and how to reach it afterwards; that is the only per-transport knowledge here, one table entry
// per transport in bench_transports.cpp.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "communicators/communicator.h"

namespace gvirtus::bench {

struct BenchTransport {
  std::string name;  // as in transport_names(): "tcp"
  // The "endpoint" object (JSON text) the server end listens on: a free local address.
  std::string server_endpoint;
  // The endpoint the client end connects to, given the listener's local_name().
  std::function<std::string(const std::string& local_name)> client_endpoint;
};

// The table entry for `name`, or nullptr when the bench cannot set that transport up.
const BenchTransport* find_bench_transport(std::string_view name);

// Transports the bench can measure, for --help and error messages.
std::vector<std::string> bench_transport_names();

// A communicator for one endpoint object, through the configuration parser and the factory.
// Throws gvirtus::Error as they do.
std::unique_ptr<Communicator> make_bench_communicator(const BenchTransport& transport,
                                                      const std::string& endpoint,
                                                      size_t max_message_bytes);

}  // namespace gvirtus::bench

#include "transport/transport_cases.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include "common/config.h"
#include "common/unique_fd.h"
#include "communicators/factory.h"

namespace gvirtus::testing {
namespace {

// Endpoints are built from properties.json text, as users write them, through the factory.
std::unique_ptr<Communicator> from_config(const std::string& endpoint, size_t max_message_bytes) {
  const Config config =
      parse_config(R"({"communicator":[{"endpoint":)" + endpoint + R"(,"plugins":[]}]})", "<test>");
  return make_communicator(config.endpoints.at(0), max_message_bytes);
}

std::string port_of(const std::string& url) {
  return url.substr(url.rfind(':') + 1);
}

std::string tcp_endpoint(const std::string& host, const std::string& port) {
  return R"({"suite":"tcp/ip","protocol":"tcp","server_address":")" + host + R"(","port":")" +
         port + R"("})";
}

// A loopback port with nothing behind it: bound, then closed.
std::string free_tcp_port() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  return std::to_string(ntohs(addr.sin_port));
}

}  // namespace

std::vector<TransportCase> transport_cases() {
  return {
      {"tcp",
       [](size_t max) {
         ServedEndpoint served;
         served.listener = from_config(tcp_endpoint("127.0.0.1", "0"), max)->serve();
         served.client =
             from_config(tcp_endpoint("127.0.0.1", port_of(served.listener->local_name())), max);
         return served;
       },
       [] { return from_config(tcp_endpoint("127.0.0.1", free_tcp_port()), 1 << 20); }},
  };
}

}  // namespace gvirtus::testing

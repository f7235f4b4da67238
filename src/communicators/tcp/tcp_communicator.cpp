#include "communicators/tcp/tcp_communicator.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/unique_fd.h"
#include "communicators/stream/stream_connection.h"
#include "communicators/stream/stream_socket.h"

namespace gvirtus {
namespace {

std::string url(const TcpAddress& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  return "tcp://" + (v6 ? "[" + address.host + "]" : address.host) + ":" +
         std::to_string(address.port);
}

// getaddrinfo results, freed on scope exit.
struct AddrInfoList {
  addrinfo* head = nullptr;
  ~AddrInfoList() {
    if (head != nullptr) ::freeaddrinfo(head);
  }
};

void resolve(const TcpAddress& address, bool passive, AddrInfoList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string port = std::to_string(address.port);
  const int rc = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &out.head);
  if (rc != 0) {
    raise(ErrorKind::kFailed, "cannot resolve " + url(address) + ": " + ::gai_strerror(rc));
  }
}

void set_int_option(int fd, int level, int name, int value) {
  // Failing to tune a socket is not fatal; the connection still works, only slower.
  (void)::setsockopt(fd, level, name, &value, sizeof value);
}

// Dead-peer detection that does not limit how long a call may run: keepalive probes are answered
// by the peer's kernel even while its process is busy in a long CUDA call, so only a vanished
// host or a cut network ends the connection - after about kKeepIdleS + kKeepIntervalS *
// kKeepCount seconds when idle, or kUserTimeoutMs when sent data stays unacknowledged.
constexpr int kKeepIdleS = 10;
constexpr int kKeepIntervalS = 5;
constexpr int kKeepCount = 3;
constexpr int kUserTimeoutMs = 30000;

void tune_connected(int fd) {
  set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1);
  set_int_option(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
  set_int_option(fd, IPPROTO_TCP, TCP_KEEPIDLE, kKeepIdleS);
  set_int_option(fd, IPPROTO_TCP, TCP_KEEPINTVL, kKeepIntervalS);
  set_int_option(fd, IPPROTO_TCP, TCP_KEEPCNT, kKeepCount);
  set_int_option(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, kUserTimeoutMs);
}

uint16_t local_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
}

StreamSocketTraits tcp_traits() {
  return {"tcp", tune_connected, [](int fd) { return describe_peer(fd, "tcp"); }};
}

class TcpCommunicator final : public Communicator {
 public:
  TcpCommunicator(TcpAddress address, size_t max_message_bytes)
      : address_(std::move(address)), max_message_bytes_(max_message_bytes) {}

  std::unique_ptr<Listener> serve() override {
    AddrInfoList list;
    resolve(address_, true, list);
    int last_error = 0;
    for (addrinfo* ai = list.head; ai != nullptr; ai = ai->ai_next) {
      UniqueFd fd(
          ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
      if (!fd.valid()) {
        last_error = errno;
        continue;
      }
      set_int_option(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1);
      if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), 128) != 0) {
        last_error = errno;
        continue;
      }
      TcpAddress bound{address_.host, local_port(fd.get())};
      return std::make_unique<StreamListener>(std::move(fd), url(bound), tcp_traits(),
                                              max_message_bytes_);
    }
    raise(ErrorKind::kFailed, "cannot listen on " + url(address_) + ": " +
                                  std::strerror(last_error != 0 ? last_error : EADDRNOTAVAIL));
  }

  std::unique_ptr<Connection> connect(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    AddrInfoList list;
    resolve(address_, false, list);
    int err = EADDRNOTAVAIL;
    for (addrinfo* ai = list.head; ai != nullptr; ai = ai->ai_next) {
      UniqueFd fd =
          connect_stream_socket(ai->ai_family, ai->ai_addr, ai->ai_addrlen, deadline, err);
      if (!fd.valid()) continue;
      tune_connected(fd.get());
      return std::make_unique<StreamConnection>(std::move(fd), "tcp", url(address_),
                                                max_message_bytes_);
    }
    if (err == ETIMEDOUT) {
      raise(ErrorKind::kTimedOut, "cannot connect to " + url(address_) + ": no answer within " +
                                      std::to_string(timeout.count()) + " ms");
    }
    raise(ErrorKind::kDisconnected,
          "cannot connect to " + url(address_) + ": " + std::strerror(err));
  }

  std::string name() const override { return url(address_); }

 private:
  TcpAddress address_;
  size_t max_message_bytes_;
};

std::string strip_brackets(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::string(host);
}

}  // namespace

std::unique_ptr<Communicator> make_tcp_communicator(TcpAddress address, size_t max_message_bytes) {
  address.host = strip_brackets(address.host);
  return std::make_unique<TcpCommunicator>(std::move(address), max_message_bytes);
}

TransportInfo tcp_transport_info() {
  return {"tcp",
          {"tcp/ip", "tcp"},
          {"tcp"},
          [](const EndpointConfig& endpoint, size_t max_message_bytes) {
            TcpAddress address{endpoint.string_or("server_address", "127.0.0.1"),
                               endpoint.require_port("port")};
            if (address.host.empty()) {
              endpoint.fail("server_address", "expected a host name or address, got \"\"");
            }
            return make_tcp_communicator(std::move(address), max_message_bytes);
          }};
}

}  // namespace gvirtus

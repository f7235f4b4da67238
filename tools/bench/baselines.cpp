#include "baselines.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"

namespace gvirtus::bench {
namespace {

// One end of a connected stream socket carrying fixed-size messages without framing: both ends
// know the size from the control message, as in NetPIPE.
class SocketChannel final : public MessageChannel {
 public:
  SocketChannel(UniqueFd fd, const char* name) : fd_(std::move(fd)), name_(name) {}

  void send(ByteView data) override {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t sent = ::send(fd_.get(), data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (sent < 0) {
        if (errno == EINTR) continue;
        raise_errno(std::string(name_) + " send", errno);
      }
      done += static_cast<size_t>(sent);
    }
  }

  ByteView recv(size_t expected) override {
    // Grows outside the timed loops: the warm-up of each size comes first.
    if (buffer_.size() < expected) buffer_.resize(expected);
    size_t done = 0;
    while (done < expected) {
      const ssize_t got = ::read(fd_.get(), buffer_.data() + done, expected - done);
      if (got < 0) {
        if (errno == EINTR) continue;
        raise_errno(std::string(name_) + " receive", errno);
      }
      if (got == 0) {
        raise(ErrorKind::kDisconnected, std::string(name_) + ": the peer closed the socket");
      }
      done += static_cast<size_t>(got);
    }
    return ByteView(buffer_.data(), expected);
  }

  void shutdown() override { ::shutdown(fd_.get(), SHUT_RDWR); }

 private:
  UniqueFd fd_;
  const char* name_;
  std::vector<std::byte> buffer_;
};

UniqueFd checked_socket(int domain, int type, const char* what) {
  UniqueFd fd(::socket(domain, type | SOCK_CLOEXEC, 0));
  if (!fd.valid()) raise_errno(what, errno);
  return fd;
}

void set_nodelay(int fd) {
  const int on = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) {
    raise_errno("raw_tcp: TCP_NODELAY", errno);
  }
}

// A connected pair of loopback TCP sockets. connect() completes against the listen backlog, so
// one thread can do both sides.
std::pair<UniqueFd, UniqueFd> tcp_loopback_pair() {
  UniqueFd listener = checked_socket(AF_INET, SOCK_STREAM, "raw_tcp: socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener.get(), 1) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    raise_errno("raw_tcp: listen on 127.0.0.1", errno);
  }
  UniqueFd client = checked_socket(AF_INET, SOCK_STREAM, "raw_tcp: socket");
  if (::connect(client.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    raise_errno("raw_tcp: connect to 127.0.0.1", errno);
  }
  UniqueFd server(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!server.valid()) raise_errno("raw_tcp: accept", errno);
  set_nodelay(client.get());
  set_nodelay(server.get());
  return {std::move(client), std::move(server)};
}

}  // namespace

ChannelPair raw_tcp_pair() {
  auto [client, server] = tcp_loopback_pair();
  return {std::make_unique<SocketChannel>(std::move(client), "raw_tcp"),
          std::make_unique<SocketChannel>(std::move(server), "raw_tcp")};
}

ChannelPair unix_socket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    raise_errno("unix_socket: socketpair", errno);
  }
  return {std::make_unique<SocketChannel>(UniqueFd(fds[0]), "unix_socket"),
          std::make_unique<SocketChannel>(UniqueFd(fds[1]), "unix_socket")};
}

double memcpy_mbps(size_t bytes, int repeats) {
  if (bytes == 0 || repeats <= 0) return 0;
  // Filled with distinct values so that every page is really backed before timing starts.
  std::vector<std::byte> from(bytes, std::byte{0x5a});
  std::vector<std::byte> to(bytes, std::byte{0xa5});
  double best = 0;
  for (int i = 0; i < repeats; ++i) {
    from[i % bytes] = static_cast<std::byte>(i);
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (to[i % bytes] != static_cast<std::byte>(i)) raise(ErrorKind::kFailed, "memcpy miscopied");
    best = std::max(best, static_cast<double>(bytes) / seconds / 1e6);
  }
  return best;
}

}  // namespace gvirtus::bench

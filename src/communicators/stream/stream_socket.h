// Socket plumbing the stream transports (tcp, vsock) share: a connect bounded by a deadline and a
// listener that turns accepted sockets into StreamConnections. Only the address family, the
// socket tuning and the peer's name differ between them.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/unique_fd.h"
#include "communicators/communicator.h"

namespace gvirtus {

// Connects a new stream socket of `family` to `addr` without blocking past `deadline`. On success
// returns a blocking, connected socket; on failure an invalid fd, with `err` set to the errno
// (ETIMEDOUT when the deadline passed).
UniqueFd connect_stream_socket(int family, const sockaddr* addr, socklen_t addr_len,
                               std::chrono::steady_clock::time_point deadline, int& err);

// Per-transport behaviour of a StreamListener.
struct StreamSocketTraits {
  std::string transport;                    // "tcp", "vsock"
  std::function<void(int fd)> tune;         // options for each accepted socket
  std::function<std::string(int fd)> peer;  // "vsock://3:1234", for logs
};

// A listening stream socket (non-blocking, so that a daemon that polled wait_fd() never stalls
// when the client gave up in between; accept() itself still blocks, in poll()).
class StreamListener final : public Listener {
 public:
  StreamListener(UniqueFd fd, std::string local_name, StreamSocketTraits traits,
                 size_t max_message_bytes);

  std::unique_ptr<Connection> accept() override;
  int wait_fd() const override { return fd_.get(); }
  std::string local_name() const override { return local_name_; }

 private:
  UniqueFd fd_;
  std::string local_name_;
  StreamSocketTraits traits_;
  size_t max_message_bytes_;
};

}  // namespace gvirtus

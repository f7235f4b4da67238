#include "communicators/stream/stream_socket.h"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <climits>

#include "common/error.h"
#include "communicators/stream/stream_connection.h"

namespace gvirtus {

UniqueFd connect_stream_socket(int family, const sockaddr* addr, socklen_t addr_len,
                               std::chrono::steady_clock::time_point deadline, int& err) {
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) {
    err = errno;
    return {};
  }
  if (::connect(fd.get(), addr, addr_len) != 0) {
    if (errno != EINPROGRESS) {
      err = errno;
      return {};
    }
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        err = ETIMEDOUT;
        return {};
      }
      pollfd p{fd.get(), POLLOUT, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), INT_MAX)));
      if (ready < 0) {
        if (errno == EINTR) continue;
        err = errno;
        return {};
      }
      if (ready == 0) continue;
      int so_error = 0;
      socklen_t len = sizeof so_error;
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len);
      if (so_error != 0) {
        err = so_error;
        return {};
      }
      break;
    }
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    err = errno;
    return {};
  }
  return fd;
}

StreamListener::StreamListener(UniqueFd fd, std::string local_name, StreamSocketTraits traits,
                               size_t max_message_bytes)
    : fd_(std::move(fd)),
      local_name_(std::move(local_name)),
      traits_(std::move(traits)),
      max_message_bytes_(max_message_bytes) {}

std::unique_ptr<Connection> StreamListener::accept() {
  for (;;) {
    const int fd = ::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      if (traits_.tune) traits_.tune(fd);
      std::string peer = traits_.peer(fd);
      return std::make_unique<StreamConnection>(UniqueFd(fd), traits_.transport, std::move(peer),
                                                max_message_bytes_);
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, -1) < 0 && errno != EINTR) raise_errno("poll on " + local_name_, errno);
      continue;
    }
    // A client that gave up between poll() and accept() is not our failure: wait again.
    if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
    raise_errno("accept on " + local_name_, errno);
  }
}

}  // namespace gvirtus

#include "communicators/rdma/rdma_resources.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>

#include "common/error.h"

namespace gvirtus::rdma {
namespace {

std::atomic<uint64_t> g_forks{0};

void count_fork() {
  g_forks.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void install_fork_counter() {
  static std::once_flag once;
  std::call_once(once, [] { ::pthread_atfork(nullptr, count_fork, count_fork); });
}

uint64_t fork_generation() {
  return g_forks.load(std::memory_order_relaxed);
}

SharedRegion::SharedRegion(size_t bytes) : bytes_(bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) raise_errno("rdma: mmap of " + std::to_string(bytes) + " bytes", errno);
  data_ = static_cast<std::byte*>(p);
}

SharedRegion::~SharedRegion() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

EventChannel::EventChannel() {
  channel_ = ::rdma_create_event_channel();
  if (channel_ == nullptr) {
    raise(ErrorKind::kFailed, std::string("rdma: cannot open the rdma_cm device: ") +
                                  std::strerror(errno) +
                                  " (is rdma_ucm loaded and /dev/infiniband/rdma_cm readable?)");
  }
  const int flags = ::fcntl(channel_->fd, F_GETFL);
  ::fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK);
}

EventChannel::~EventChannel() {
  if (channel_ != nullptr) ::rdma_destroy_event_channel(channel_);
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

rdma_cm_event* next_cm_event(EventChannel& channel, int64_t deadline_ms) {
  for (;;) {
    rdma_cm_event* event = nullptr;
    if (::rdma_get_cm_event(channel.get(), &event) == 0) return event;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      raise_errno("rdma: reading a connection event", errno);
    }
    int timeout = -1;
    if (deadline_ms >= 0) {
      const int64_t left = deadline_ms - now_ms();
      if (left <= 0) return nullptr;
      timeout = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    pollfd p{channel.fd(), POLLIN, 0};
    if (::poll(&p, 1, timeout) < 0 && errno != EINTR) raise_errno("rdma: poll", errno);
  }
}

std::string rdma_url(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr == nullptr) return "rdma://?";
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    return std::string("rdma://") + host + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    return std::string("rdma://[") + host + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return "rdma://?";
}

}  // namespace gvirtus::rdma

#include "communicators/shm/shm_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include "common/error.h"
#include "common/log.h"
#include "common/unique_fd.h"
#include "common/wire.h"
#include "communicators/shm/shm_connection.h"
#include "communicators/shm/shm_futex.h"
#include "communicators/shm/shm_layout.h"
#include "communicators/shm/shm_link.h"
#include "communicators/shm/shm_mapping.h"

namespace gvirtus::shm {
namespace {

constexpr int kPassedFds = 1;  // the segment
// 2: the hello grew the backend's mapping address and the segment an arena.
// 3: futex doorbells on the waiting words replace the two eventfds.
constexpr uint32_t kSocketHelloVersion = 3;

// A sleep lasts at most this long before the sleeper looks at the socket (peer_gone()): the
// first sleep of a wait kFirstLook, each further one twice the last, up to kLongestLook. So a
// peer killed while this side sleeps is noticed within kLongestLook, and a side idle for long
// wakes 25 times a second, two cheap system calls each.
constexpr std::chrono::milliseconds kFirstLook{5};
constexpr std::chrono::milliseconds kLongestLook{40};

// The hello that travels with the fds: explicit little-endian fields. `base` is where the
// backend maps the segment: the client maps it at the same address when it can, so that a host
// pointer into the arena means the same on both sides (as CUDA's unified addressing expects of
// page-locked memory that kernels use).
struct Hello {
  std::byte bytes[32];  // magic u64, version u32, pad u32, ring_bytes u64, base u64
};

// A hello with room for the passed fds, as one msghdr for sendmsg and recvmsg alike.
struct HelloMessage {
  Hello hello{};
  iovec iov{hello.bytes, sizeof hello.bytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kPassedFds)] = {};
  msghdr msg{};

  HelloMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  HelloMessage(const HelloMessage&) = delete;  // msg points into it
  HelloMessage& operator=(const HelloMessage&) = delete;
};

std::string url(const std::string& path) {
  return "shm://" + path;
}

// A sockaddr_un for `path`; "@name" is Linux's abstract namespace (nothing on the filesystem).
socklen_t unix_address(const std::string& path, sockaddr_un& addr) {
  addr = {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    raise(ErrorKind::kInvalidInput, "shm socket path \"" + path + "\" must have 1 to " +
                                        std::to_string(sizeof addr.sun_path - 1) + " characters");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() +
                                (path[0] == '@' ? 0 : 1));
}

int poll_ms(const Deadline& deadline) {
  if (!deadline) return -1;
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT_MAX));
}

// One side of a socket-mode session.
class SocketLink final : public ShmLink {
 public:
  SocketLink(int side, UniqueFd socket, Mapping mapping, uint64_t ring_bytes, std::string peer)
      : ShmLink(ring_bytes),
        side_(side),
        socket_(std::move(socket)),
        mapping_(std::move(mapping)),
        peer_(std::move(peer)) {}

  SegmentHeader* header() const override { return static_cast<SegmentHeader*>(mapping_.base()); }
  uint64_t mapped_bytes() const override { return mapping_.bytes(); }
  int side() const override { return side_; }

  void ring(int r) override { (void)wake_sleeper(peer_waiting(r)); }

  bool has_doorbell() const override { return true; }

  // One futex wait on this side's waiting word (set to 1 by the caller), timed so that the
  // caller looks at the socket now and then: a futex cannot tell that the peer died.
  void sleep(int r, const Deadline& deadline, int round) override {
    std::chrono::nanoseconds d = std::min<std::chrono::nanoseconds>(
        kFirstLook * (int64_t{1} << std::min(round, 3)), kLongestLook);
    if (deadline) d = std::min<std::chrono::nanoseconds>(d, *deadline - Clock::now());
    if (futex_wait(own_waiting(r), 1, d) == FutexWait::kUnsupported) {
      // Not expected of a memfd; sleep rather than spin if a kernel ever refuses.
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(d, kFirstLook));
    }
  }

  bool peer_gone() override {
    // The socket carries nothing after the handshake: readable means EOF (or a misbehaving peer,
    // which ends the session too).
    pollfd p{socket_.get(), POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) > 0 && p.revents != 0;
  }

  void shutdown() override {
    ::shutdown(socket_.get(), SHUT_RDWR);  // the peer sees EOF at its next look
    // Wake both sides' sleepers: ours fail at once (the connection set its shut-down flag before
    // this fence), the peer's look at the socket at once rather than after their timeout.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (int r : {kClientToServer, kServerToClient}) {
      (void)wake_sleeper(own_waiting(r));
      (void)wake_sleeper(peer_waiting(r));
    }
  }

  std::string peer_name() const override { return peer_; }

 private:
  using Clock = std::chrono::steady_clock;

  int side_;
  UniqueFd socket_;
  Mapping mapping_;
  std::string peer_;
};

std::string describe_unix_peer(int fd, const std::string& path) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    return url(path) + " (pid " + std::to_string(cred.pid) + ")";
  }
  return url(path);
}

class SocketListener final : public Listener {
 public:
  SocketListener(UniqueFd fd, ShmOptions options, size_t max_message_bytes, ino_t inode)
      : fd_(std::move(fd)),
        options_(std::move(options)),
        max_message_bytes_(max_message_bytes),
        inode_(inode),
        owner_(::getpid()) {}

  ~SocketListener() override {
    // Only the process that bound the path removes it (a forked worker drops its copy), and only
    // if the path still names our socket.
    if (owner_ != ::getpid() || options_.path[0] == '@') return;
    struct stat st {};
    if (::stat(options_.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == inode_) {
      ::unlink(options_.path.c_str());
    }
  }

  std::unique_ptr<Connection> accept() override {
    for (;;) {
      UniqueFd fd(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (fd.valid()) return establish(std::move(fd));
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pollfd p{fd_.get(), POLLIN, 0};
        if (::poll(&p, 1, -1) < 0 && errno != EINTR) raise_errno("poll on " + local_name(), errno);
        continue;
      }
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      raise_errno("accept on " + local_name(), errno);
    }
  }
  int wait_fd() const override { return fd_.get(); }
  std::string local_name() const override { return url(options_.path); }

 private:
  std::unique_ptr<Connection> establish(UniqueFd socket) {
    const std::string peer = describe_unix_peer(socket.get(), options_.path);
    const uint64_t rings = segment_bytes(options_.ring_bytes);
    UniqueFd memfd(::memfd_create("gvirtus-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!memfd.valid()) raise_errno("shm: memfd_create for " + peer, errno);
    auto size_to = [&](uint64_t bytes) {
      if (::ftruncate(memfd.get(), static_cast<off_t>(bytes)) != 0) {
        raise_errno("shm: sizing a segment of " + std::to_string(bytes) + " bytes", errno);
      }
    };
    size_to(rings + options_.arena_bytes);
    Mapping mapping;
    try {
      mapping = Mapping(memfd.get(), rings + options_.arena_bytes, "the shm segment for " + peer);
    } catch (const Error& e) {
      // No address space for the arena here (a LimitAS): serve with the rings alone.
      if (options_.arena_bytes == 0) throw;
      GVIRTUS_LOG(kWarning) << e.what() << "; serving " << peer << " without an arena";
      size_to(rings);
      mapping = Mapping(memfd.get(), rings, "the shm rings for " + peer);
    }
    // Sealed: neither side can shrink it under the other's mapping (which would be SIGBUS).
    if (::fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
      raise_errno("shm: sealing the segment", errno);
    }
    init_header(mapping.base(), options_.ring_bytes);

    HelloMessage m;
    std::byte* hello = m.hello.bytes;
    store_le<uint64_t>(hello, kMagic);
    store_le<uint32_t>(hello + 8, kSocketHelloVersion);
    store_le<uint32_t>(hello + 12, 0);
    store_le<uint64_t>(hello + 16, options_.ring_bytes);
    store_le<uint64_t>(hello + 24, reinterpret_cast<uintptr_t>(mapping.base()));
    cmsghdr* cmsg = CMSG_FIRSTHDR(&m.msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * kPassedFds);
    const int fds[kPassedFds] = {memfd.get()};
    std::memcpy(CMSG_DATA(cmsg), fds, sizeof fds);
    ssize_t sent;
    do {
      sent = ::sendmsg(socket.get(), &m.msg, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent != static_cast<ssize_t>(sizeof m.hello)) {
      raise_errno("shm: sending the segment to " + peer, sent < 0 ? errno : EPIPE);
    }
    // memfd closes here: the mapping keeps the segment, and the client holds its own fd.
    auto link = std::make_unique<SocketLink>(kServerSide, std::move(socket), std::move(mapping),
                                             options_.ring_bytes, peer);
    return std::make_unique<ShmConnection>(std::move(link), max_message_bytes_, options_.spin);
  }

  UniqueFd fd_;
  ShmOptions options_;
  size_t max_message_bytes_;
  ino_t inode_;
  pid_t owner_;
};

// Waits for `events` on `fd` until `deadline`; false when it passed.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ready = ::poll(&p, 1, poll_ms(deadline));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) raise_errno("poll", errno);
  }
}

}  // namespace

std::unique_ptr<Listener> serve_socket(const ShmOptions& options, size_t max_message_bytes) {
  sockaddr_un addr;
  const socklen_t len = unix_address(options.path, addr);
  const std::string name = url(options.path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) raise_errno("cannot listen on " + name, errno);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    const int err = errno;
    if (err != EADDRINUSE || options.path[0] == '@') {
      raise(ErrorKind::kFailed, "cannot listen on " + name + ": " + std::strerror(err));
    }
    // A path left by a killed daemon is replaced; one that still answers belongs to a live one.
    struct stat st {};
    if (::lstat(options.path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
      raise(ErrorKind::kFailed,
            "cannot listen on " + name + ": the path exists and is not a socket");
    }
    UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (::connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0 || errno == EAGAIN) {
      raise(ErrorKind::kFailed, "cannot listen on " + name + ": another backend serves it");
    }
    ::unlink(options.path.c_str());
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      raise(ErrorKind::kFailed, "cannot listen on " + name + ": " + std::strerror(errno));
    }
  }
  if (::listen(fd.get(), 128) != 0) raise_errno("cannot listen on " + name, errno);
  ino_t inode = 0;
  struct stat st {};
  if (options.path[0] != '@' && ::stat(options.path.c_str(), &st) == 0) inode = st.st_ino;
  return std::make_unique<SocketListener>(std::move(fd), options, max_message_bytes, inode);
}

std::unique_ptr<Connection> connect_socket(const ShmOptions& options, size_t max_message_bytes,
                                           std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string name = url(options.path);
  sockaddr_un addr;
  const socklen_t len = unix_address(options.path, addr);
  UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket.valid()) raise_errno("cannot connect to " + name, errno);
  if (::connect(socket.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    const int err = errno;
    if (err == EAGAIN || err == EINPROGRESS) {  // backlog full: wait for room
      if (!wait_for(socket.get(), POLLOUT, deadline)) {
        raise(ErrorKind::kTimedOut, "cannot connect to " + name + ": no answer within " +
                                        std::to_string(timeout.count()) + " ms");
      }
    } else {
      raise(ErrorKind::kDisconnected, "cannot connect to " + name + ": " + std::strerror(err));
    }
  }
  // The hello and the fds.
  HelloMessage m;
  msghdr& msg = m.msg;
  const std::byte* hello = m.hello.bytes;
  ssize_t got;
  for (;;) {
    if (!wait_for(socket.get(), POLLIN, deadline)) {
      raise(ErrorKind::kTimedOut, "cannot connect to " + name + ": no segment within " +
                                      std::to_string(timeout.count()) + " ms");
    }
    got = ::recvmsg(socket.get(), &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    if (got >= 0 || (errno != EINTR && errno != EAGAIN)) break;
  }
  // Take ownership of whatever fds arrived before judging the message, so none leaks.
  UniqueFd fds[kPassedFds];
  int passed = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (passed < kPassedFds) {
        fds[passed++].reset(fd);
      } else {
        ::close(fd);
      }
    }
  }
  if (got < 0) raise_errno("cannot connect to " + name, errno);
  if (got == 0) raise(ErrorKind::kDisconnected, "cannot connect to " + name + ": it closed");
  if (got != static_cast<ssize_t>(sizeof m.hello) || load_le<uint64_t>(hello) != kMagic) {
    raise(ErrorKind::kInvalidInput, name + " is not a gvirtus shm backend (bad hello)");
  }
  // The version before the fds: another version may pass another number of them.
  if (load_le<uint32_t>(hello + 8) != kSocketHelloVersion) {
    raise(ErrorKind::kInvalidInput,
          name + " speaks shm hello version " + std::to_string(load_le<uint32_t>(hello + 8)) +
              ", this build speaks " + std::to_string(kSocketHelloVersion));
  }
  if (passed != kPassedFds || (msg.msg_flags & MSG_CTRUNC) != 0) {
    raise(ErrorKind::kInvalidInput, name + " is not a gvirtus shm backend (bad hello)");
  }
  const uint64_t ring = load_le<uint64_t>(hello + 16);
  struct stat st {};
  if (::fstat(fds[0].get(), &st) != 0) raise_errno("shm: fstat of the segment", errno);
  const int seals = ::fcntl(fds[0].get(), F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    raise(ErrorKind::kInvalidInput, name + " passed a segment that can shrink under us");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (!valid_ring_bytes(ring) || size < segment_bytes(ring) ||
      size - segment_bytes(ring) > kMaxArenaBytes ||
      (size - segment_bytes(ring)) % kArenaAlign != 0) {
    raise(ErrorKind::kInvalidInput, name + " passed a segment of the wrong size");
  }
  auto* backend_base = reinterpret_cast<void*>(load_le<uint64_t>(hello + 24));
  Mapping mapping;
  try {
    mapping = Mapping(fds[0].get(), size, "the shm segment of " + name, backend_base);
  } catch (const Error& e) {
    // No room for the arena in this address space (a ulimit -v, a 32-bit-sized limit): the rings
    // alone still carry everything, and page-locked memory stays in the client.
    if (size == segment_bytes(ring)) throw;
    GVIRTUS_LOG(kInfo) << e.what() << "; using " << name << " without its arena";
    mapping = Mapping(fds[0].get(), segment_bytes(ring), "the shm rings of " + name);
  }
  if (validate_header(mapping.base(), mapping.bytes(), name) != ring) {
    raise(ErrorKind::kInvalidInput, name + " passed a segment whose rings differ from its hello");
  }
  const int flags = ::fcntl(socket.get(), F_GETFL);
  if (flags >= 0) ::fcntl(socket.get(), F_SETFL, flags & ~O_NONBLOCK);
  auto link =
      std::make_unique<SocketLink>(kClientSide, std::move(socket), std::move(mapping), ring, name);
  return std::make_unique<ShmConnection>(std::move(link), max_message_bytes, options.spin);
}

}  // namespace gvirtus::shm

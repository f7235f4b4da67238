#include "backend/services/shareable_handles.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>

#include "common/error.h"
#include "common/log.h"

namespace gvirtus::services {
namespace {

constexpr char kNamePrefix[] = "gvirtus-shareable-";
constexpr size_t kRequestBytes = sizeof(uint64_t) + 16;  // the index, the secret

// The abstract socket address of the worker named `server`, and its length.
socklen_t address_of(const uint8_t (&server)[16], sockaddr_un& address) {
  address = {};
  address.sun_family = AF_UNIX;
  std::string name = kNamePrefix;
  static constexpr char kHex[] = "0123456789abcdef";
  for (uint8_t byte : server) {
    name += kHex[byte >> 4];
    name += kHex[byte & 15];
  }
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

void set_timeouts(int fd) {
  const auto ms = ShareableHandles::kRequestTimeout.count();
  timeval limit{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>(ms % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

bool same_secret(const uint8_t (&a)[16], const uint8_t* b) {
  uint8_t differ = 0;
  for (size_t i = 0; i < 16; ++i) differ |= static_cast<uint8_t>(a[i] ^ b[i]);
  return differ == 0;
}

bool random_bytes(uint8_t* out, size_t n) {
  return ::getrandom(out, n, 0) == static_cast<ssize_t>(n);
}

}  // namespace

std::optional<ShareableToken> ShareableHandles::publish(UniqueFd fd, uint64_t bytes,
                                                        std::string& why) {
  std::lock_guard lock(mutex_);
  if (published_.size() >= kMaxPublished) {
    why = "the session keeps " + std::to_string(kMaxPublished) + " exported handles already";
    return std::nullopt;
  }
  if (!listener_.valid() && !listen(why)) return std::nullopt;
  Published entry{{}, std::move(fd), bytes};
  if (!random_bytes(entry.secret, sizeof entry.secret)) {
    why = "no random bytes for the handle's secret";
    return std::nullopt;
  }
  ShareableToken token{};
  std::memcpy(token.server, server_, sizeof server_);
  token.index = published_.size();
  std::memcpy(token.secret, entry.secret, sizeof entry.secret);
  published_.push_back(std::move(entry));
  return token;
}

bool ShareableHandles::listen(std::string& why) {
  if (!random_bytes(server_, sizeof server_)) {
    why = "no random bytes for the worker's name";
    return false;
  }
  UniqueFd socket(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  sockaddr_un address;
  const socklen_t length = address_of(server_, address);
  if (!socket.valid() || ::bind(socket.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(socket.get(), 32) != 0) {
    why = std::string("cannot listen for other sessions: ") + std::strerror(errno);
    return false;
  }
  listener_ = std::move(socket);
  server_thread_ = std::thread([this] { serve(); });  // lives as long as the worker
  return true;
}

ShareableHandles::~ShareableHandles() {
  if (!server_thread_.joinable()) return;
  ::shutdown(listener_.get(), SHUT_RDWR);  // accept() returns, and serve() with it
  server_thread_.join();
}

void ShareableHandles::serve() {
  for (;;) {
    const int connection = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) {
        if (errno == EMFILE || errno == ENFILE) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        continue;
      }
      if (errno != EINVAL) {  // EINVAL: shut down by the destructor
        GVIRTUS_LOG(kWarning) << "shareable handles: accept: " << std::strerror(errno);
      }
      return;
    }
    answer(connection);
    ::close(connection);
  }
}

void ShareableHandles::answer(int connection) {
  set_timeouts(connection);
  ucred peer{};
  socklen_t peer_length = sizeof peer;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &peer_length) != 0 ||
      peer.uid != ::geteuid()) {
    GVIRTUS_LOG(kWarning) << "shareable handles: refused a peer of user " << peer.uid;
    return;
  }
  uint8_t request[kRequestBytes + 1];
  if (::recv(connection, request, sizeof request, 0) != static_cast<ssize_t>(kRequestBytes)) {
    return;  // not a request of ours
  }
  uint64_t index = 0;
  std::memcpy(&index, request, sizeof index);
  uint8_t secret[16];
  std::memcpy(secret, request + sizeof index, sizeof secret);
  Fetched fetched = local(index, secret);
  const UniqueFd& fd = fetched.fd;
  uint8_t reply[1 + sizeof(uint64_t)] = {static_cast<uint8_t>(fd.valid() ? 1 : 0)};
  std::memcpy(reply + 1, &fetched.bytes, sizeof fetched.bytes);
  iovec part{reply, sizeof reply};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd.valid()) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    const int raw = fd.get();
    std::memcpy(CMSG_DATA(header), &raw, sizeof raw);
  }
  ::sendmsg(connection, &message, MSG_NOSIGNAL);
}

ShareableHandles::Fetched ShareableHandles::local(uint64_t index, const uint8_t (&secret)[16]) {
  std::lock_guard lock(mutex_);
  if (index >= published_.size() || !same_secret(published_[index].secret, secret)) return {};
  const Published& entry = published_[index];
  return {UniqueFd(::fcntl(entry.fd.get(), F_DUPFD_CLOEXEC, 0)), entry.bytes};
}

ShareableHandles::Fetched ShareableHandles::fetch(const ShareableToken& token, std::string& why) {
  bool own = false;
  {
    std::lock_guard lock(mutex_);
    own = listener_.valid() && std::memcmp(token.server, server_, sizeof server_) == 0;
  }
  if (own) {  // exported by this session: no need to ask anyone
    Fetched fetched = local(token.index, token.secret);
    if (!fetched.fd.valid()) why = "the handle is not one this session exported";
    return fetched;
  }
  UniqueFd socket(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!socket.valid()) {
    why = std::string("socket: ") + std::strerror(errno);
    return {};
  }
  set_timeouts(socket.get());
  sockaddr_un address;
  const socklen_t length = address_of(token.server, address);
  if (::connect(socket.get(), reinterpret_cast<sockaddr*>(&address), length) != 0) {
    why = "the exporting session is gone, or was served by a backend of another machine";
    return {};
  }
  uint8_t request[kRequestBytes];
  std::memcpy(request, &token.index, sizeof token.index);
  std::memcpy(request + sizeof token.index, token.secret, sizeof token.secret);
  if (::send(socket.get(), request, sizeof request, MSG_NOSIGNAL) !=
      static_cast<ssize_t>(sizeof request)) {
    why = std::string("the exporting session did not take the request: ") + std::strerror(errno);
    return {};
  }
  uint8_t reply[1 + sizeof(uint64_t)] = {};
  iovec part{reply, sizeof reply};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  const ssize_t got = ::recvmsg(socket.get(), &message, MSG_CMSG_CLOEXEC);
  UniqueFd received;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS &&
        header->cmsg_len == CMSG_LEN(sizeof(int))) {
      int raw = -1;
      std::memcpy(&raw, CMSG_DATA(header), sizeof raw);
      received.reset(raw);
    }
  }
  if (got != static_cast<ssize_t>(sizeof reply) || reply[0] != 1 || !received.valid() ||
      (message.msg_flags & MSG_CTRUNC) != 0) {
    why = "the exporting session does not know the handle";
    return {};
  }
  Fetched fetched{std::move(received), 0};
  std::memcpy(&fetched.bytes, reply + 1, sizeof fetched.bytes);
  return fetched;
}

ShareableHandles& shareable_handles() {
  static ShareableHandles* const instance = new ShareableHandles;  // its thread outlives exit
  return *instance;
}

bool import_source(uint32_t type, std::span<const std::byte> blob, ImportSource& source,
                   std::string& why) {
  if (shareable_blob_bytes(type) == 0 || blob.size() != shareable_blob_bytes(type)) {
    raise(ErrorKind::kInvalidInput, "a shareable handle of type " + std::to_string(type) + " in " +
                                        std::to_string(blob.size()) + " bytes");
  }
  source.type = type;
  if (type == kHandleFabric) {
    std::memcpy(source.fabric.data(), blob.data(), kFabricHandleBytes);
    return true;
  }
  ShareableToken token{};
  std::memcpy(&token, blob.data(), sizeof token);
  ShareableHandles::Fetched fetched = shareable_handles().fetch(token, why);
  if (!fetched.fd.valid()) return false;
  source.fd = std::move(fetched.fd);
  source.bytes = fetched.bytes;
  return true;
}

void log_shareable_failure(const char* call, const std::string& why) {
  GVIRTUS_LOG(kWarning) << call << ": " << why;
}

bool export_blob(uint32_t type, const void* handle, uint64_t bytes, std::vector<std::byte>& blob,
                 std::string& why) {
  if (type == kHandleFabric) {
    blob.resize(kFabricHandleBytes);
    std::memcpy(blob.data(), handle, kFabricHandleBytes);
    return true;
  }
  int fd = -1;
  std::memcpy(&fd, handle, sizeof fd);
  const auto token = shareable_handles().publish(UniqueFd(fd), bytes, why);
  if (!token) return false;
  blob.resize(sizeof *token);
  std::memcpy(blob.data(), &*token, sizeof *token);
  return true;
}

}  // namespace gvirtus::services

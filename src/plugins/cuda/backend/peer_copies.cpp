// Direct copies between two backends of a client's pool (peer_copies.h).
#include "plugins/cuda/backend/peer_copies.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "common/unique_fd.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// What a failed transfer answers: the copy did not happen (the client relays it instead).
constexpr CUresult kTransferFailed = CUDA_ERROR_UNKNOWN;

struct Receiver {
  UniqueFd listening;
  CUdeviceptr device;
  uint64_t bytes;
  Clock::time_point deadline;
};
// The session's open receivers, by token (a worker serves one session).
std::mutex& receivers_mutex = *new std::mutex;
auto& receivers = *new std::map<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>, Receiver>;

auto key_of(const PeerToken& t) {
  return std::tuple{t.w0, t.w1, t.w2, t.w3};
}

PeerToken random_token() {
  PeerToken token{};
  auto* bytes = reinterpret_cast<std::byte*>(&token);
  for (size_t have = 0; have < sizeof token;) {
    const ssize_t got = ::getrandom(bytes + have, sizeof token - have, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) raise(ErrorKind::kFailed, std::string("getrandom: ") + std::strerror(errno));
    have += static_cast<size_t>(got);
  }
  return token;
}

// Whether two tokens are equal, in time that does not depend on where they differ.
bool same_token(const PeerToken& a, const PeerToken& b) {
  return ((a.w0 ^ b.w0) | (a.w1 ^ b.w1) | (a.w2 ^ b.w2) | (a.w3 ^ b.w3)) == 0;
}

void set_timeouts(int fd, std::chrono::milliseconds wait) {
  timeval tv{static_cast<time_t>(wait.count() / 1000),
             static_cast<suseconds_t>((wait.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool send_all(int fd, const void* data, size_t bytes) {
  const auto* p = static_cast<const std::byte*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t bytes) {
  auto* p = static_cast<std::byte*>(data);
  while (bytes > 0) {
    const ssize_t n = ::recv(fd, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

void receive_open(WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<PeerReceiveOpenRequest>(in);
  in.expect_end();
  result = vet_device_pointer(request.device, request.bytes);
  uint32_t port = 0;
  PeerToken token{};
  if (result == CUDA_SUCCESS) {
    std::lock_guard lock(receivers_mutex);
    const auto now = Clock::now();
    std::erase_if(receivers, [&](const auto& entry) { return entry.second.deadline < now; });
    if (receivers.size() >= kMaxPeerReceivers) {
      GVIRTUS_LOG(kWarning) << "a direct copy refused: " << kMaxPeerReceivers
                            << " are waiting for their senders already";
      result = kTransferFailed;
    } else {
      UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_ANY);
      socklen_t length = sizeof address;
      if (!fd.valid() ||
          ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
          ::listen(fd.get(), 4) != 0 ||
          ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        GVIRTUS_LOG(kWarning) << "a direct copy cannot listen: " << std::strerror(errno);
        result = kTransferFailed;
      } else {
        port = ntohs(address.sin_port);
        token = random_token();
        receivers.emplace(key_of(token),
                          Receiver{std::move(fd), request.device, request.bytes, now + kPeerWait});
      }
    }
  }
  out.put<int32_t>(result);
  out.put<uint32_t>(port);
  put_record(out, token);
}

// Takes one sender that presents `token` before the deadline: the connection, or an invalid one.
UniqueFd accept_sender(const Receiver& receiver, const PeerToken& token) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(receiver.deadline - Clock::now());
    if (left.count() <= 0) return UniqueFd();
    pollfd p{receiver.listening.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return UniqueFd();
    UniqueFd connection(::accept4(receiver.listening.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection.valid()) continue;
    set_timeouts(connection.get(),
                 std::chrono::duration_cast<std::chrono::milliseconds>(kPeerWait));
    PeerToken presented{};
    uint64_t bytes = 0;
    if (recv_all(connection.get(), &presented, sizeof presented) && same_token(presented, token) &&
        recv_all(connection.get(), &bytes, sizeof bytes)) {
      if (bytes == receiver.bytes) return connection;
      GVIRTUS_LOG(kWarning) << "a direct copy's sender announced " << bytes << " bytes, not "
                            << receiver.bytes;
      return UniqueFd();
    }
    GVIRTUS_LOG(kWarning) << "a connection to a direct copy's socket without its token: closed";
  }
}

void receive(WireReader& in, WireWriter& out, CUresult& result) {
  const auto token = get_record<PeerToken>(in);
  in.expect_end();
  Receiver receiver;
  {
    std::lock_guard lock(receivers_mutex);
    const auto it = receivers.find(key_of(token));
    if (it == receivers.end()) {
      result = CUDA_ERROR_INVALID_VALUE;  // no such transfer opened (or it expired)
      out.put<int32_t>(result);
      return;
    }
    receiver = std::move(it->second);
    receivers.erase(it);
  }
  result = kTransferFailed;
  const UniqueFd sender = accept_sender(receiver, token);
  if (!sender.valid()) {
    GVIRTUS_LOG(kWarning) << "a direct copy's sender did not come";
  } else if (real().cuMemcpyHtoD_v2 == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  } else {
    std::vector<std::byte> buffer(std::min<uint64_t>(receiver.bytes, kCopyChunkBytes));
    result = CUDA_SUCCESS;
    for (uint64_t done = 0; done < receiver.bytes && result == CUDA_SUCCESS;) {
      const size_t chunk = std::min<uint64_t>(kCopyChunkBytes, receiver.bytes - done);
      if (!recv_all(sender.get(), buffer.data(), chunk)) {
        GVIRTUS_LOG(kWarning) << "a direct copy's sender stopped after " << done << " of "
                              << receiver.bytes << " bytes";
        result = kTransferFailed;
        break;
      }
      result = real().cuMemcpyHtoD_v2(receiver.device + done, buffer.data(), chunk);
      done += chunk;
    }
    // The sender waits for this byte, so its reply says the bytes are in place.
    const uint8_t done = result == CUDA_SUCCESS ? 1 : 0;
    send_all(sender.get(), &done, 1);
  }
  out.put<int32_t>(result);
}

// A connection to host:port within the wait, or an invalid one (the reason logged).
UniqueFd connect_to(const std::string& host, uint32_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int e = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); e != 0) {
    GVIRTUS_LOG(kWarning) << "a direct copy cannot resolve " << host << ": " << gai_strerror(e);
    return UniqueFd();
  }
  UniqueFd connection;
  for (addrinfo* a = found; a != nullptr && !connection.valid(); a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;
    set_timeouts(fd.get(), std::chrono::duration_cast<std::chrono::milliseconds>(kPeerWait));
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) connection = std::move(fd);
  }
  ::freeaddrinfo(found);
  if (!connection.valid()) {
    GVIRTUS_LOG(kWarning) << "a direct copy cannot reach " << host << ":" << port << ": "
                          << std::strerror(errno);
  } else {
    const int one = 1;
    ::setsockopt(connection.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return connection;
}

void send(WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<PeerSendRequest>(in);
  const auto token = get_record<PeerToken>(in);
  const std::string host(in.get_string(kMaxPeerHost));
  in.expect_end();
  if (request.port == 0 || request.port > 65535 || host.empty()) {
    raise(ErrorKind::kInvalidInput,
          "a direct copy to port " + std::to_string(request.port) + " of \"" + host + "\"");
  }
  result = vet_device_pointer(request.device, request.bytes);
  if (result == CUDA_SUCCESS && real().cuMemcpyDtoH_v2 == nullptr)
    result = CUDA_ERROR_NOT_SUPPORTED;
  if (result != CUDA_SUCCESS) {
    out.put<int32_t>(result);
    return;
  }
  result = kTransferFailed;
  const UniqueFd connection = connect_to(host, request.port);
  if (connection.valid() && send_all(connection.get(), &token, sizeof token) &&
      send_all(connection.get(), &request.bytes, sizeof request.bytes)) {
    std::vector<std::byte> buffer(std::min<uint64_t>(request.bytes, kCopyChunkBytes));
    CUresult copied = CUDA_SUCCESS;
    bool sent = true;
    for (uint64_t done = 0; done < request.bytes && copied == CUDA_SUCCESS && sent;) {
      const size_t chunk = std::min<uint64_t>(kCopyChunkBytes, request.bytes - done);
      copied = real().cuMemcpyDtoH_v2(buffer.data(), request.device + done, chunk);
      if (copied == CUDA_SUCCESS) sent = send_all(connection.get(), buffer.data(), chunk);
      done += chunk;
    }
    uint8_t received = 0;
    if (copied != CUDA_SUCCESS) {
      result = copied;
    } else if (sent && recv_all(connection.get(), &received, 1) && received == 1) {
      result = CUDA_SUCCESS;
    } else {
      GVIRTUS_LOG(kWarning) << "a direct copy to " << host << ":" << request.port
                            << " was not taken in";
    }
  }
  out.put<int32_t>(result);
}

}  // namespace

bool run_peer_copy(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::gvirtusPeerReceiveOpen:
      receive_open(in, out, result);
      return true;
    case Fn::gvirtusPeerReceive:
      receive(in, out, result);
      return true;
    case Fn::gvirtusPeerSend:
      send(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda

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
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
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

// Chunks handed between the handler's thread, which copies them on the device (the session's
// context is current there), and a thread that moves them over the connection, so that a chunk's
// device copy overlaps the previous chunk's transfer. kDepth buffers: while one is on the
// network and one is being copied, the next is ready.
class ChunkPipeline {
 public:
  static constexpr size_t kDepth = 3;

  // The worker's buffers, made once and kept, so that a transfer pays neither for allocating nor
  // for faulting in its staging memory; a transfer that finds them in use by another (copies
  // from two of the client's threads run on two executors) makes its own.
  ChunkPipeline() {
    static std::mutex kept_mutex;
    static std::array<std::unique_ptr<std::byte[]>, kDepth>* const kept = [] {
      auto* buffers = new std::array<std::unique_ptr<std::byte[]>, kDepth>;
      for (auto& buffer : *buffers) buffer.reset(new std::byte[kCopyChunkBytes]);
      return buffers;
    }();
    kept_lock_ = std::unique_lock(kept_mutex, std::try_to_lock);
    for (size_t i = 0; i < kDepth; ++i) {
      if (!kept_lock_.owns_lock()) own_[i].reset(new std::byte[kCopyChunkBytes]);
      buffers_[i] = kept_lock_.owns_lock() ? (*kept)[i].get() : own_[i].get();
      free_.push_back(i);
    }
  }

  std::byte* data(size_t buffer) { return buffers_[buffer]; }

  // The producer: an empty buffer (nullopt once the pipeline stopped), then filled with `bytes`.
  std::optional<size_t> take_free() { return take(free_); }
  void put_full(size_t buffer, size_t bytes) {
    std::lock_guard lock(mutex_);
    sizes_[buffer] = bytes;  // before the consumer can take it
    full_.push_back(buffer);
    changed_.notify_all();
  }
  // No chunk follows those put: the consumer ends once it has taken them.
  void finish() {
    std::lock_guard lock(mutex_);
    finished_ = true;
    changed_.notify_all();
  }

  // The consumer: the next full buffer and its bytes, in order (nullopt at the end, or once the
  // pipeline stopped), then given back empty.
  std::optional<std::pair<size_t, size_t>> take_full() {
    const auto buffer = take(full_);
    if (!buffer) return std::nullopt;
    std::lock_guard lock(mutex_);
    return std::pair{*buffer, sizes_[*buffer]};
  }
  void give_back(size_t buffer) { put(free_, buffer); }

  // A failure on either side: both sides end at their next step.
  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

 private:
  std::optional<size_t> take(std::deque<size_t>& queue) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock,
                  [&] { return stopped_ || !queue.empty() || (&queue == &full_ && finished_); });
    if (stopped_ || queue.empty()) return std::nullopt;
    const size_t buffer = queue.front();
    queue.pop_front();
    return buffer;
  }
  void put(std::deque<size_t>& queue, size_t buffer) {
    std::lock_guard lock(mutex_);
    queue.push_back(buffer);
    changed_.notify_all();
  }

  std::unique_lock<std::mutex> kept_lock_;
  std::array<std::unique_ptr<std::byte[]>, kDepth> own_;
  std::array<std::byte*, kDepth> buffers_{};
  std::array<size_t, kDepth> sizes_{};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<size_t> free_, full_;
  bool finished_ = false;
  bool stopped_ = false;
};

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
    // The network thread receives each chunk while this one copies the previous to the device.
    ChunkPipeline pipeline;
    uint64_t received = 0;
    bool complete = true;
    std::thread network([&] {
      while (received < receiver.bytes) {
        const auto buffer = pipeline.take_free();
        if (!buffer) return;  // the device copy failed
        const size_t chunk = std::min<uint64_t>(kCopyChunkBytes, receiver.bytes - received);
        if (!recv_all(sender.get(), pipeline.data(*buffer), chunk)) {
          complete = false;
          pipeline.stop();
          return;
        }
        pipeline.put_full(*buffer, chunk);
        received += chunk;
      }
      pipeline.finish();
    });
    result = CUDA_SUCCESS;
    uint64_t written = 0;
    while (const auto chunk = pipeline.take_full()) {
      result = real().cuMemcpyHtoD_v2(receiver.device + written, pipeline.data(chunk->first),
                                      chunk->second);
      if (result != CUDA_SUCCESS) {
        pipeline.stop();
        break;
      }
      written += chunk->second;
      pipeline.give_back(chunk->first);
    }
    network.join();
    if (!complete) {
      GVIRTUS_LOG(kWarning) << "a direct copy's sender stopped after " << received << " of "
                            << receiver.bytes << " bytes";
      result = kTransferFailed;
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
    // This thread copies each chunk from the device while the network thread sends the
    // previous one.
    ChunkPipeline pipeline;
    bool sent = true;
    std::thread network([&] {
      while (const auto chunk = pipeline.take_full()) {
        if (!send_all(connection.get(), pipeline.data(chunk->first), chunk->second)) {
          sent = false;
          pipeline.stop();
          return;
        }
        pipeline.give_back(chunk->first);
      }
    });
    CUresult copied = CUDA_SUCCESS;
    for (uint64_t done = 0; done < request.bytes;) {
      const auto buffer = pipeline.take_free();
      if (!buffer) break;  // the network failed
      const size_t chunk = std::min<uint64_t>(kCopyChunkBytes, request.bytes - done);
      copied = real().cuMemcpyDtoH_v2(pipeline.data(*buffer), request.device + done, chunk);
      if (copied != CUDA_SUCCESS) {
        pipeline.stop();
        break;
      }
      pipeline.put_full(*buffer, chunk);
      done += chunk;
    }
    pipeline.finish();
    network.join();
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

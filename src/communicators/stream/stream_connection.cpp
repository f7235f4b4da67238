#include "communicators/stream/stream_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "common/error.h"
#include "common/wire.h"

namespace gvirtus {
namespace {

constexpr size_t kLengthBytes = sizeof(uint64_t);
constexpr size_t kInitialBuffer = 256 * 1024;
// A buffer grown past kShrinkAbove shrinks back after kShrinkAfter messages in a row that fit in
// the initial size: a session does not keep its largest message's memory for life, while a stream
// of large messages keeps its buffer (a fresh one would page-fault on every message).
constexpr size_t kShrinkAbove = size_t{4} << 20;
constexpr uint32_t kShrinkAfter = 64;
constexpr size_t kMaxIovecs = 64;  // well below IOV_MAX; frames have a handful of pieces

}  // namespace

StreamConnection::StreamConnection(UniqueFd fd, std::string transport, std::string peer_name,
                                   size_t max_message_bytes)
    : fd_(std::move(fd)),
      transport_(std::move(transport)),
      peer_name_(std::move(peer_name)),
      max_message_bytes_(max_message_bytes),
      buffer_(new std::byte[kInitialBuffer]),  // uninitialised on purpose: read() fills it
      capacity_(kInitialBuffer) {}

void StreamConnection::send(std::span<const ByteView> pieces) {
  if (pieces.size() + 1 > kMaxIovecs) {
    raise(ErrorKind::kInvalidInput, "send: " + std::to_string(pieces.size()) +
                                        " pieces exceed the limit of " +
                                        std::to_string(kMaxIovecs - 1));
  }
  uint64_t total = 0;
  for (const ByteView& piece : pieces) total += piece.size();
  std::byte length[kLengthBytes];
  store_le<uint64_t>(length, total);

  iovec iov[kMaxIovecs];
  size_t count = 0;
  iov[count++] = {length, kLengthBytes};
  for (const ByteView& piece : pieces) {
    if (piece.empty()) continue;
    iov[count++] = {const_cast<std::byte*>(piece.data()), piece.size()};
  }
  write_all(iov, count);
}

void StreamConnection::send_many(std::span<const std::span<const ByteView>> messages) {
  // As many whole messages per sendmsg() as fit kMaxBatchIovecs; a message with more pieces than
  // that goes by itself.
  constexpr size_t kMaxBatchIovecs = 512;
  constexpr size_t kMaxBatchMessages = kMaxBatchIovecs / 2;
  std::byte lengths[kMaxBatchMessages][kLengthBytes];
  iovec iov[kMaxBatchIovecs];
  size_t count = 0, held = 0;
  for (const auto& pieces : messages) {
    if (pieces.size() + 1 > kMaxBatchIovecs - count || held == kMaxBatchMessages) {
      write_all(iov, count);
      count = held = 0;
    }
    if (pieces.size() + 1 > kMaxBatchIovecs) {
      send(pieces);  // refuses it with the reason
      continue;
    }
    uint64_t total = 0;
    for (const ByteView& piece : pieces) total += piece.size();
    store_le<uint64_t>(lengths[held], total);
    iov[count++] = {lengths[held++], kLengthBytes};
    for (const ByteView& piece : pieces) {
      if (!piece.empty()) iov[count++] = {const_cast<std::byte*>(piece.data()), piece.size()};
    }
  }
  if (count > 0) write_all(iov, count);
}

void StreamConnection::write_all(iovec* iov, size_t count) {
  // Loop over partial writes, advancing through the iovec array in place.
  size_t first = 0;
  while (first < count) {
    if (shut_down_.load(std::memory_order_relaxed)) {
      raise(ErrorKind::kDisconnected, "send to " + peer_name_ + ": connection shut down");
    }
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = count - first;
    const ssize_t sent = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      raise_errno("send to " + peer_name_, errno);
    }
    size_t left = static_cast<size_t>(sent);
    while (first < count && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (first < count) {
      iov[first].iov_base = static_cast<std::byte*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
}

ByteView StreamConnection::recv() {
  return receive(std::nullopt);
}

ByteView StreamConnection::recv(std::chrono::milliseconds timeout) {
  return receive(std::chrono::steady_clock::now() + timeout);
}

uint64_t StreamConnection::next_length(Deadline deadline) {
  begin_ += consumed_;
  consumed_ = 0;
  if (begin_ == end_) {
    begin_ = end_ = 0;
    if (capacity_ > kShrinkAbove && small_streak_ >= kShrinkAfter) {
      buffer_.reset(new std::byte[kInitialBuffer]);
      capacity_ = kInitialBuffer;
    }
  }
  if (end_ - begin_ < kLengthBytes) fill(kLengthBytes, 0, deadline);
  const uint64_t bytes = load_le<uint64_t>(buffer_.get() + begin_);
  if (bytes > max_message_bytes_) {
    raise(ErrorKind::kInvalidInput, "message of " + std::to_string(bytes) + " bytes from " +
                                        peer_name_ + " exceeds the limit of " +
                                        std::to_string(max_message_bytes_));
  }
  return bytes;
}

ByteView StreamConnection::receive(Deadline deadline) {
  const uint64_t bytes = next_length(deadline);
  const size_t total = kLengthBytes + static_cast<size_t>(bytes);
  if (end_ - begin_ < total) {
    reserve_message(total);
    fill(total, static_cast<size_t>(bytes), deadline);
  }
  consumed_ = total;
  small_streak_ = total <= kInitialBuffer ? small_streak_ + 1 : 0;
  return ByteView(buffer_.get() + begin_ + kLengthBytes, static_cast<size_t>(bytes));
}

ByteView StreamConnection::recv_placed(size_t head_bytes, Placer place,
                                       std::optional<std::chrono::milliseconds> timeout) {
  const Deadline deadline =
      timeout ? Deadline(std::chrono::steady_clock::now() + *timeout) : std::nullopt;
  const size_t bytes = static_cast<size_t>(next_length(deadline));
  const size_t head = std::min(head_bytes, bytes);
  if (end_ - begin_ < kLengthBytes + head) fill(kLengthBytes + head, bytes, deadline);
  const Placement p = place(ByteView(buffer_.get() + begin_ + kLengthBytes, head), bytes);
  if (!p.fits(head_bytes, bytes)) {
    consumed_ = 0;  // the length stays buffered: receive() reads it again
    return receive(deadline);
  }
  try {
    // The bytes before the placed end go to the buffer as usual.
    if (end_ - begin_ < kLengthBytes + p.at) fill(kLengthBytes + p.at, bytes, deadline);
    // What fill() read past them belongs to the placed end, then perhaps to the next messages:
    // the end's share moves out, the rest closes up behind the prefix.
    std::byte* after = buffer_.get() + begin_ + kLengthBytes + p.at;
    const size_t buffered = end_ - (begin_ + kLengthBytes + p.at);
    const size_t taken = std::min(buffered, p.into.size());
    std::memcpy(p.into.data(), after, taken);
    std::memmove(after, after + taken, buffered - taken);
    end_ -= taken;
    read_into(p.into.data() + taken, p.into.size() - taken, bytes, deadline);
  } catch (...) {
    shutdown();  // part of the message went to the caller: it cannot be resumed
    throw;
  }
  consumed_ = kLengthBytes + p.at;
  small_streak_ = consumed_ <= kInitialBuffer ? small_streak_ + 1 : 0;
  return ByteView(buffer_.get() + begin_ + kLengthBytes, p.at);
}

void StreamConnection::read_into(std::byte* into, size_t n, size_t message_bytes,
                                 Deadline deadline) {
  while (n > 0) {
    if (shut_down_.load(std::memory_order_relaxed)) {
      raise(ErrorKind::kDisconnected, "receive from " + peer_name_ + ": connection shut down");
    }
    if (deadline && !wait_readable(deadline)) continue;
    const ssize_t got = ::read(fd_.get(), into, n);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) fail_closed(message_bytes, "; reset");
      raise_errno("receive from " + peer_name_, errno);
    }
    if (got == 0) fail_closed(message_bytes);
    into += got;
    n -= static_cast<size_t>(got);
  }
}

bool StreamConnection::wait_readable(const Deadline& deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      *deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) raise(ErrorKind::kTimedOut, "no message from " + peer_name_ + " in time");
  pollfd p{fd_.get(), POLLIN, 0};
  const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), INT_MAX)));
  if (ready < 0 && errno != EINTR) raise_errno("poll on " + peer_name_, errno);
  return ready > 0;
}

void StreamConnection::reserve_message(size_t total) {
  if (capacity_ - begin_ >= total) return;
  const size_t have = end_ - begin_;
  if (capacity_ >= total) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, have);
  } else {
    const size_t capacity = std::max(total, capacity_ * 2);
    std::unique_ptr<std::byte[]> bigger(new std::byte[capacity]);
    std::memcpy(bigger.get(), buffer_.get() + begin_, have);
    buffer_ = std::move(bigger);
    capacity_ = capacity;
  }
  begin_ = 0;
  end_ = have;
}

void StreamConnection::fill(size_t want, size_t message_bytes, Deadline deadline) {
  if (capacity_ - begin_ < want) reserve_message(want);
  while (end_ - begin_ < want) {
    if (shut_down_.load(std::memory_order_relaxed)) {
      raise(ErrorKind::kDisconnected, "receive from " + peer_name_ + ": connection shut down");
    }
    if (deadline && !wait_readable(deadline)) continue;
    const ssize_t got = ::read(fd_.get(), buffer_.get() + end_, capacity_ - end_);
    if (got < 0) {
      if (errno == EINTR) continue;
      // A peer that dies with our bytes unread in its socket resets the connection instead of
      // closing it: inside a message, that is still a peer gone mid-message.
      if (errno == ECONNRESET && end_ > begin_) fail_closed(message_bytes, "; reset");
      raise_errno("receive from " + peer_name_, errno);
    }
    if (got == 0) fail_closed(message_bytes);
    end_ += static_cast<size_t>(got);
  }
}

void StreamConnection::fail_closed(size_t message_bytes, const char* how) const {
  const size_t have = end_ - begin_;
  if (shut_down_.load(std::memory_order_relaxed)) {
    raise(ErrorKind::kDisconnected, "receive from " + peer_name_ + ": connection shut down");
  }
  if (have == 0) raise(ErrorKind::kDisconnected, peer_name_ + " closed the connection");
  const std::string expected =
      message_bytes > 0 ? std::to_string(kLengthBytes + message_bytes) : "a length prefix of 8";
  raise(ErrorKind::kDisconnected, peer_name_ + " closed the connection mid-message (" +
                                      std::to_string(have) + " bytes of " + expected + " received" +
                                      how + ")");
}

void StreamConnection::shutdown() {
  if (!shut_down_.exchange(true)) ::shutdown(fd_.get(), SHUT_RDWR);
}

std::string describe_peer(int fd, const char* scheme) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return std::string(scheme) + "://?";
  }
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    return std::string(scheme) + "://" + host + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    return std::string(scheme) + "://[" + host + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return std::string(scheme) + "://peer";
}

}  // namespace gvirtus

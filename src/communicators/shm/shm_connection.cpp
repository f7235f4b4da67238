#include "communicators/shm/shm_connection.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "common/error.h"
#include "common/wire.h"

namespace gvirtus::shm {
namespace {

// Publish (and release) at least this often within one message, so the two sides overlap.
constexpr size_t kPublishChunk = 64 * 1024;
constexpr size_t kInitialBuffer = 256 * 1024;
// As in the stream connection: a buffer grown past kShrinkAbove goes back to the initial size
// after kShrinkAfter small messages in a row.
constexpr size_t kShrinkAbove = size_t{4} << 20;
constexpr uint32_t kShrinkAfter = 64;
constexpr size_t kMaxPieces = 1024;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

SpinBudget spin_budget(const ShmLink& link, std::chrono::nanoseconds spin) {
  return SpinBudget(spin, link.has_doorbell() ? SpinBudget::kFloor : spin);
}

}  // namespace

ShmConnection::ShmConnection(std::unique_ptr<ShmLink> link, size_t max_message_bytes,
                             std::chrono::nanoseconds spin)
    : link_(std::move(link)),
      send_ring_(link_->side() == kServerSide ? kServerToClient : kClientToServer),
      recv_ring_(link_->side() == kServerSide ? kClientToServer : kServerToClient),
      writer_(link_->header()->rings[send_ring_],
              ring_data(link_->header(), link_->ring_bytes(), send_ring_), link_->ring_bytes()),
      reader_(link_->header()->rings[recv_ring_],
              ring_data(link_->header(), link_->ring_bytes(), recv_ring_), link_->ring_bytes()),
      max_message_bytes_(max_message_bytes),
      spin_{spin_budget(*link_, spin), spin_budget(*link_, spin)},
      buffer_(new std::byte[kInitialBuffer]),
      capacity_(kInitialBuffer) {}

template <typename Ready>
void ShmConnection::wait(int r, std::atomic<uint32_t>& waiting, Ready ready,
                         const Deadline& deadline, bool receiving) {
  SpinBudget& budget = spin_[receiving ? 1 : 0];
  const std::chrono::nanoseconds spin = budget.next();
  const auto spin_from = std::chrono::steady_clock::now();
  const auto spin_until = spin_from + spin;
  // The clock is read every kClockEvery pauses: a pause takes 10 to 140 cycles depending on the
  // CPU (35 ns on this project's EPYC test machine), so a check every 64 made the 1 us floor a
  // 2 us one, paid on every wait of an oversubscribed machine.
  constexpr uint32_t kClockEvery = 8;
  for (uint32_t i = 1;; ++i) {
    if (ready()) {
      budget.answered_while_spinning(std::chrono::steady_clock::now() - spin_from);
      return;
    }
    if (i % kClockEvery == 0 || spin.count() == 0) {
      if (shut_down_.load(std::memory_order_relaxed)) fail_gone(receiving);
      if (std::chrono::steady_clock::now() >= spin_until) break;
    }
    cpu_relax();
  }
  budget.spun_in_vain();
  for (int round = 0;; ++round) {
    // Declare the sleep, then look once more: the peer publishes, fences, then reads this word,
    // so either it sees the word and rings, or this look sees its bytes.
    waiting.store(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (ready()) {
      waiting.store(0, std::memory_order_relaxed);
      return;
    }
    if (shut_down_.load(std::memory_order_relaxed)) {
      waiting.store(0, std::memory_order_relaxed);
      fail_gone(receiving);
    }
    // No look at the peer before the first sleep (ShmLink::sleep ends soon after a peer goes):
    // in socket mode that look is a poll() of its own, a second system call on every sleep.
    if (round > 0 && link_->peer_gone()) {
      waiting.store(0, std::memory_order_relaxed);
      if (ready()) return;  // what it published before it went is still delivered
      fail_gone(receiving);
    }
    if (deadline && std::chrono::steady_clock::now() >= *deadline) {
      waiting.store(0, std::memory_order_relaxed);
      raise(ErrorKind::kTimedOut, "no message from " + link_->peer_name() + " in time");
    }
    link_->sleep(r, deadline, round);
    waiting.store(0, std::memory_order_relaxed);
    if (ready()) {
      budget.slept(std::chrono::steady_clock::now() - spin_from);
      return;
    }
  }
}

void ShmConnection::fail_gone(bool receiving) const {
  const std::string peer = link_->peer_name();
  if (shut_down_.load(std::memory_order_relaxed)) {
    raise(ErrorKind::kDisconnected,
          (receiving ? "receive from " : "send to ") + peer + ": connection shut down");
  }
  if (receiving && (length_got_ > 0 || message_got_ > 0)) {
    raise(ErrorKind::kDisconnected,
          peer + " closed the connection mid-message (" +
              std::to_string(length_got_ + message_got_) + " bytes of " +
              (length_got_ == kLengthBytes ? std::to_string(kLengthBytes + message_bytes_)
                                           : std::string("a length prefix of 8")) +
              " received)");
  }
  raise(ErrorKind::kDisconnected,
        peer + (receiving ? " closed the connection" : " closed the connection; send failed"));
}

void ShmConnection::publish() {
  if (writer_.publish()) link_->ring(send_ring_);
}

void ShmConnection::release() {
  if (reader_.release()) link_->ring(recv_ring_);
}

void ShmConnection::put(const std::byte* src, size_t n) {
  while (n > 0) {
    uint64_t room = writer_.writable();
    if (room == 0) {
      publish();  // the reader must see what fills the ring before it can make room
      wait(
          send_ring_, writer_.waiting(), [&] { return (room = writer_.writable()) > 0; },
          std::nullopt, false);
    }
    const size_t k = static_cast<size_t>(std::min<uint64_t>({n, room, kPublishChunk}));
    writer_.write(src, k);
    src += k;
    n -= k;
    if (writer_.unpublished() >= kPublishChunk) publish();
  }
}

void ShmConnection::send(std::span<const ByteView> pieces) {
  if (pieces.size() > kMaxPieces) {
    raise(ErrorKind::kInvalidInput, "send: " + std::to_string(pieces.size()) +
                                        " pieces exceed the limit of " +
                                        std::to_string(kMaxPieces));
  }
  link_->on_use();
  if (shut_down_.load(std::memory_order_relaxed)) fail_gone(false);
  uint64_t total = 0;
  for (const ByteView& piece : pieces) total += piece.size();
  std::byte length[kLengthBytes];
  store_le<uint64_t>(length, total);
  put(length, kLengthBytes);
  for (const ByteView& piece : pieces) put(piece.data(), piece.size());
  publish();
}

void ShmConnection::reserve(size_t bytes) {
  if (capacity_ >= bytes) return;
  const size_t capacity = std::max(bytes, std::min(capacity_ * 2, max_message_bytes_));
  std::unique_ptr<std::byte[]> bigger(new std::byte[capacity]);  // uninitialised: the ring fills it
  std::memcpy(bigger.get(), buffer_.get(), std::min(message_got_, capacity_));
  buffer_ = std::move(bigger);
  capacity_ = capacity;
}

ByteView ShmConnection::recv() {
  return receive(std::nullopt);
}

ByteView ShmConnection::recv(std::chrono::milliseconds timeout) {
  return receive(std::chrono::steady_clock::now() + timeout);
}

ByteView ShmConnection::recv_placed(size_t head_bytes, Placer place,
                                    std::optional<std::chrono::milliseconds> timeout) {
  const Deadline deadline =
      timeout ? Deadline(std::chrono::steady_clock::now() + *timeout) : std::nullopt;
  return receive(deadline, head_bytes, &place);
}

void ShmConnection::read_message(size_t until, std::byte* base, size_t from,
                                 const Deadline& deadline) {
  uint64_t avail = 0;
  auto ready = [&] { return (avail = reader_.readable()) > 0; };
  while (message_got_ < until) {
    if (!ready()) {
      release();  // give the space back before sleeping: the writer may wait for it
      wait(recv_ring_, reader_.waiting(), ready, deadline, true);
    }
    const size_t k =
        static_cast<size_t>(std::min<uint64_t>({until - message_got_, avail, kPublishChunk}));
    reader_.read(base + (message_got_ - from), k);
    message_got_ += k;
    if (k == kPublishChunk) release();
  }
}

ByteView ShmConnection::receive(const Deadline& deadline, size_t head_bytes, const Placer* place) {
  link_->on_use();
  if (shut_down_.load(std::memory_order_relaxed)) fail_gone(true);
  uint64_t avail = 0;
  auto ready = [&] { return (avail = reader_.readable()) > 0; };
  if (length_got_ == 0 && message_got_ == 0 && capacity_ > kShrinkAbove &&
      small_streak_ >= kShrinkAfter) {
    buffer_.reset(new std::byte[kInitialBuffer]);
    capacity_ = kInitialBuffer;
  }
  while (length_got_ < kLengthBytes) {
    if (!ready()) wait(recv_ring_, reader_.waiting(), ready, deadline, true);
    const size_t k = static_cast<size_t>(std::min<uint64_t>(kLengthBytes - length_got_, avail));
    reader_.read(length_ + length_got_, k);
    length_got_ += k;
    if (length_got_ == kLengthBytes) {
      message_bytes_ = load_le<uint64_t>(length_);
      if (message_bytes_ > max_message_bytes_) {
        const uint64_t bytes = message_bytes_;
        length_got_ = 0;
        release();
        raise(ErrorKind::kInvalidInput, "message of " + std::to_string(bytes) + " bytes from " +
                                            link_->peer_name() + " exceeds the limit of " +
                                            std::to_string(max_message_bytes_));
      }
    }
  }
  const size_t bytes = static_cast<size_t>(message_bytes_);
  // Bytes [0, buffered) of the message go to the buffer, the rest to `placed` when placed.
  size_t buffered = bytes;
  std::byte* placed = nullptr;
  // (A message that a timed-out recv() began past its head is not placed: its bytes are here.)
  if (place != nullptr && message_got_ <= std::min(head_bytes, bytes)) {
    const size_t head = std::min(head_bytes, bytes);
    reserve(head);
    read_message(head, buffer_.get(), 0, deadline);
    const Placement p = (*place)(ByteView(buffer_.get(), head), bytes);
    if (p.fits(head_bytes, bytes)) {
      buffered = p.at;
      placed = p.into.data();
    }
  }
  reserve(buffered);
  try {
    read_message(buffered, buffer_.get(), 0, deadline);
    if (placed != nullptr) read_message(bytes, placed, buffered, deadline);
  } catch (...) {
    if (placed != nullptr) shutdown();  // part of the message went to the caller: no resuming
    throw;
  }
  release();
  length_got_ = 0;
  message_got_ = 0;
  message_bytes_ = 0;
  small_streak_ = bytes <= kInitialBuffer ? small_streak_ + 1 : 0;
  return ByteView(buffer_.get(), buffered);
}

void ShmConnection::shutdown() {
  if (!shut_down_.exchange(true)) link_->shutdown();
}

std::span<std::byte> ShmConnection::shared_memory() {
  const uint64_t ring = link_->ring_bytes();
  auto* base = reinterpret_cast<std::byte*>(link_->header());
  return {base + segment_bytes(ring), arena_bytes(link_->mapped_bytes(), ring)};
}

}  // namespace gvirtus::shm

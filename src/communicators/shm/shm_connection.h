// A Connection over a shm segment: messages stream through the two rings of shm_ring.h.
//
// Framing in a ring: an 8-byte little-endian length, then the message, as a byte stream; a message
// larger than the ring flows through it in pieces while the receiver drains it. send() copies the
// caller's pieces straight into the ring (no staging copy) and publishes every kPublishChunk bytes
// so that the receiver copies while the sender still writes. recv() assembles the message in a
// buffer the connection owns (a copy: the peer can still write the ring, so what the caller
// validates must not change under it).
//
// Waiting: spin for up to `spin` (the peer usually answers within microseconds; spin_budget.h
// shortens the spin while spinning does not pay), then set the ring's waiting word and sleep
// through the link (a timed futex wait on that word). A dead peer fails every wait with
// kDisconnected.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "communicators/communicator.h"
#include "communicators/shm/shm_link.h"
#include "communicators/shm/shm_ring.h"
#include "communicators/shm/spin_budget.h"

namespace gvirtus::shm {

class ShmConnection final : public Connection {
 public:
  ShmConnection(std::unique_ptr<ShmLink> link, size_t max_message_bytes,
                std::chrono::nanoseconds spin);

  void send(std::span<const ByteView> pieces) override;
  ByteView recv() override;
  ByteView recv(std::chrono::milliseconds timeout) override;
  // Copies the placed end of a message from the ring straight into its span.
  ByteView recv_placed(size_t head_bytes, Placer place,
                       std::optional<std::chrono::milliseconds> timeout) override;
  void set_max_message(size_t bytes) override { max_message_bytes_ = bytes; }
  void shutdown() override;
  std::span<std::byte> shared_memory() override;
  std::string peer_name() const override { return link_->peer_name(); }
  std::string transport() const override { return "shm"; }

  // How long the next receive may spin before it sleeps (spin_budget.h), for tests and
  // diagnostics. Read it on the receiving thread, between receives.
  std::chrono::nanoseconds receive_spin() const { return spin_[1].budget(); }

 private:
  static constexpr size_t kLengthBytes = sizeof(uint64_t);

  // recv(), or recv_placed() when `place` is given.
  ByteView receive(const Deadline& deadline, size_t head_bytes = 0, const Placer* place = nullptr);
  // Reads the message's bytes up to offset `until` from the ring, to `base` + (offset - `from`).
  void read_message(size_t until, std::byte* base, size_t from, const Deadline& deadline);
  // Copies `n` bytes into the send ring, waiting for space as needed.
  void put(const std::byte* src, size_t n);
  void publish();
  void release();
  // Waits until `ready()` or throws (kDisconnected, kTimedOut). `r` is the ring waited on.
  template <typename Ready>
  void wait(int r, std::atomic<uint32_t>& waiting, Ready ready, const Deadline& deadline,
            bool receiving);
  [[noreturn]] void fail_gone(bool receiving) const;
  // Makes the buffer hold at least `bytes`, keeping the message's bytes received so far.
  void reserve(size_t bytes);

  std::unique_ptr<ShmLink> link_;
  int send_ring_;
  int recv_ring_;
  RingWriter writer_;
  RingReader reader_;
  size_t max_message_bytes_;
  // Spin budgets of the two waits, which may run at once: [0] send (ring full), [1] receive.
  SpinBudget spin_[2];
  std::atomic<bool> shut_down_{false};

  // Receive state; a message interrupted by a timeout continues at the next recv().
  std::byte length_[kLengthBytes];
  size_t length_got_ = 0;
  uint64_t message_bytes_ = 0;
  size_t message_got_ = 0;
  std::unique_ptr<std::byte[]> buffer_;
  size_t capacity_ = 0;
  uint32_t small_streak_ = 0;
};

}  // namespace gvirtus::shm

// The data path of the shm communicator: the two ends of one single-producer/single-consumer byte
// ring (layout in shm_layout.h). Each end lives in one process and is used by one thread at a
// time (the Connection's send() or recv() caller). Nothing here blocks or makes a system call:
// waiting and doorbells belong to the connection and its link.
//
// Both ends start at counter 0, the state init_header and reset_session leave, and never read
// their own counters back from the segment: the peer can write anything there, at any time, and
// only the peer's counter is read, then checked against what this end knows.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "communicators/shm/shm_layout.h"

namespace gvirtus::shm {

class RingWriter {
 public:
  RingWriter(RingControl& control, std::byte* data, uint64_t bytes);

  // Bytes that can be written now without overwriting unread data. Reads the consumer's counter
  // only when the cached one says the ring is full, so a writer that has room never touches the
  // consumer's cache line. Throws Error{kInvalidInput} if the peer's counter is impossible.
  uint64_t writable() {
    if (head_ - tail_ < size_) return size_ - (head_ - tail_);
    refresh();
    return size_ - (head_ - tail_);
  }
  // Copies `n` <= writable() bytes into the ring; the reader sees them after publish().
  void write(const std::byte* src, size_t n) {
    const uint64_t at = head_ & mask_;
    const size_t first = static_cast<size_t>(std::min<uint64_t>(n, size_ - at));
    std::memcpy(data_ + at, src, first);
    if (first < n) std::memcpy(data_, src + first, n - first);
    head_ += n;
  }
  uint64_t unpublished() const { return head_ - published_; }
  // Makes the written bytes visible. Returns true when the reader declared it is sleeping, so
  // the caller must ring its doorbell.
  bool publish() {
    published_ = head_;
    control_.head.store(head_, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the reader's, before sleep
    return control_.reader_waiting.load(std::memory_order_relaxed) != 0;
  }
  std::atomic<uint32_t>& waiting() { return control_.writer_waiting; }

 private:
  void refresh();

  RingControl& control_;
  std::byte* data_;
  uint64_t size_;
  uint64_t mask_;
  uint64_t head_;       // written, maybe not yet published
  uint64_t published_;  // what the reader may see
  uint64_t tail_;       // the consumer's counter, as last read
};

class RingReader {
 public:
  RingReader(RingControl& control, const std::byte* data, uint64_t bytes);

  // Bytes published and not yet read. Throws Error{kInvalidInput} if the peer's counter is
  // impossible (more than a ring's worth ahead, or behind).
  uint64_t readable() {
    if (head_ == tail_) refresh();
    return head_ - tail_;
  }
  // Copies `n` <= readable() bytes out; the writer may reuse their space after release().
  void read(std::byte* dst, size_t n) {
    const uint64_t at = tail_ & mask_;
    const size_t first = static_cast<size_t>(std::min<uint64_t>(n, size_ - at));
    std::memcpy(dst, data_ + at, first);
    if (first < n) std::memcpy(dst + first, data_, n - first);
    tail_ += n;
  }
  // Gives the read bytes' space back. Returns true when the writer declared it is sleeping.
  bool release() {
    control_.tail.store(tail_, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return control_.writer_waiting.load(std::memory_order_relaxed) != 0;
  }
  std::atomic<uint32_t>& waiting() { return control_.reader_waiting; }

 private:
  void refresh();

  RingControl& control_;
  const std::byte* data_;
  uint64_t size_;
  uint64_t mask_;
  uint64_t tail_;  // read (released or about to be)
  uint64_t head_;  // the producer's counter, as last read
};

}  // namespace gvirtus::shm

#include "communicators/shm/shm_ring.h"

#include <string>

#include "common/error.h"

namespace gvirtus::shm {

RingWriter::RingWriter(RingControl& control, std::byte* data, uint64_t bytes)
    : control_(control),
      data_(data),
      size_(bytes),
      mask_(bytes - 1),
      head_(0),
      published_(0),
      tail_(0) {}

void RingWriter::refresh() {
  const uint64_t tail = control_.tail.load(std::memory_order_acquire);
  // The consumer can only release what was published: anything else is a corrupt peer.
  if (tail < tail_ || tail > published_) {
    raise(ErrorKind::kInvalidInput, "shm ring: the peer's read counter " + std::to_string(tail) +
                                        " is outside [" + std::to_string(tail_) + ", " +
                                        std::to_string(published_) + "]");
  }
  tail_ = tail;
}

RingReader::RingReader(RingControl& control, const std::byte* data, uint64_t bytes)
    : control_(control), data_(data), size_(bytes), mask_(bytes - 1), tail_(0), head_(0) {}

void RingReader::refresh() {
  const uint64_t head = control_.head.load(std::memory_order_acquire);
  if (head < head_ || head - tail_ > size_) {
    raise(ErrorKind::kInvalidInput, "shm ring: the peer's write counter " + std::to_string(head) +
                                        " is outside [" + std::to_string(head_) + ", " +
                                        std::to_string(tail_ + size_) + "]");
  }
  head_ = head;
}

}  // namespace gvirtus::shm

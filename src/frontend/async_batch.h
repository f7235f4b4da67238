// Asynchronous calls held back briefly so that several leave in one send (one system call over
// tcp) instead of one each: a burst of launches, async copies and event records costs one
// transport send per batch rather than per call.
//
// The batch never delays anything that waits: a synchronous call sends the batch ahead of itself
// (in the same send_many), and so does an asynchronous call too large to copy into the batch. A
// batch also leaves when it holds kMaxFrames calls or kMaxBytes bytes, and at the latest
// `window` after its first call (the client's flusher thread sees to that), so an application
// that launches work and then only watches mapped memory still has its work started.
//
// Not thread-safe: the client guards it with its send mutex. Frames are copied in (the caller's
// payload may change once send_async returns); the buffers keep their capacity, so a warm batch
// allocates nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <vector>

#include "communicators/communicator.h"

namespace gvirtus {

class AsyncBatch {
 public:
  static constexpr size_t kMaxFrames = 64;
  static constexpr size_t kMaxBytes = size_t{64} << 10;
  // A frame larger than this is never copied: it flushes the batch and goes by itself.
  static constexpr size_t kMaxCopiedFrameBytes = size_t{4} << 10;

  bool empty() const { return frames_.empty(); }
  // When the oldest held frame arrived.
  std::chrono::steady_clock::time_point since() const { return since_; }
  // Whether a frame of `bytes` (header included) may be copied in.
  static bool fits(size_t bytes) { return bytes <= kMaxCopiedFrameBytes; }
  // Copies in one frame given as pieces (its header first).
  void add(std::span<const ByteView> pieces);
  // Whether the batch should leave now.
  bool full() const { return frames_.size() >= kMaxFrames || bytes_.size() >= kMaxBytes; }

  // Sends the held frames, then `also` (pieces of one more message, not copied) if not empty, in
  // one send_many, and empties the batch. On failure the batch is emptied too: the connection is
  // then unusable, and the caller fails the session.
  void send(Connection& connection, std::span<const ByteView> also = {});

 private:
  struct Held {
    size_t offset;
    size_t bytes;
  };
  std::vector<std::byte> bytes_;
  std::vector<Held> frames_;
  std::chrono::steady_clock::time_point since_;
  // Built at send(), kept for their capacity.
  std::vector<ByteView> views_;
  std::vector<std::span<const ByteView>> messages_;
};

}  // namespace gvirtus

// Bounds the request bytes a session holds queued for its executors (limits.max_inflight_bytes).
//
// The session's reading thread copies each call for another client thread into that thread's
// executor queue. A client that sends faster than its calls run (a stream of asynchronous copies
// behind a long kernel) would otherwise make its worker buffer without bound. acquire() blocks the
// reading thread while the queues hold more than the limit, so the transport stops reading and
// the client's sends block in turn: back-pressure, nothing refused, nothing lost. One call larger
// than the whole limit still passes when nothing else is queued (it is bounded by the frame limit).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace gvirtus {

class InflightBudget {
 public:
  explicit InflightBudget(uint64_t limit) : limit_(limit) {}

  // Blocks until `bytes` fit (or nothing else is held), then holds them. Reading thread only.
  void acquire(uint64_t bytes) {
    std::unique_lock lock(mutex_);
    if (held_ > 0 && held_ + bytes > limit_) ++waits_;
    freed_.wait(lock, [&] { return held_ == 0 || held_ + bytes <= limit_; });
    held_ += bytes;
  }

  // Gives back what acquire() held; called by executors when a call is done (or skipped).
  void release(uint64_t bytes) {
    {
      std::lock_guard lock(mutex_);
      held_ -= bytes;
    }
    freed_.notify_all();
  }

  // How often acquire() had to wait: for the session's log at its end.
  uint64_t waits() const {
    std::lock_guard lock(mutex_);
    return waits_;
  }

 private:
  const uint64_t limit_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  uint64_t held_ = 0;
  uint64_t waits_ = 0;
};

}  // namespace gvirtus

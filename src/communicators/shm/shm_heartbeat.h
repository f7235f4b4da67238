// Liveness by counters in shared memory, for the file rendezvous (no socket can tell that a peer
// in a VM died). A Heartbeat thread bumps one counter; a Pulse watches another and says when it
// stopped moving for longer than a bound, by this process's clock (the two sides may not share
// a clock).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

namespace gvirtus::shm {

class Heartbeat {
 public:
  // Bumps `counter` every `period` from a thread of this process until destroyed.
  Heartbeat(std::atomic<uint64_t>& counter, std::chrono::milliseconds period);
  // Stops the thread if this process started it. In a forked child (where the thread does not
  // exist) its state is left alone, deliberately leaked.
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // True when the thread runs in this process.
  bool here() const;

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    bool stop = false;
    std::thread thread;
  };
  std::unique_ptr<State> state_;
  int owner_;  // pid that started the thread
};

class Pulse {
 public:
  explicit Pulse(std::chrono::milliseconds bound) : bound_(bound) {}
  // Feeds the latest value; true when it has not changed for longer than the bound.
  bool stopped(uint64_t value) {
    const auto now = std::chrono::steady_clock::now();
    if (!seen_ || value != last_) {
      seen_ = true;
      last_ = value;
      changed_ = now;
      return false;
    }
    return now - changed_ > bound_;
  }

 private:
  std::chrono::milliseconds bound_;
  bool seen_ = false;
  uint64_t last_ = 0;
  std::chrono::steady_clock::time_point changed_{};
};

// The number of fork()s this process has made: an object created before a fork and destroyed in
// the parent without being used there was handed to the child.
uint64_t forks_so_far();

// Changes in a forked child (and never otherwise): a cheap "is this still the process that
// ...?" test for the data path, where getpid() would be a system call.
uint64_t process_epoch();

}  // namespace gvirtus::shm

// An executor: one client thread's calls, run in order on a backend thread of their own.
//
// CUDA keeps state per host thread (the current device, the last error), and a call may block in
// the runtime (a stream synchronisation). A session therefore runs each client thread's calls on a
// thread of its own (DESIGN.md section 6): one client thread's calls keep their order and their
// CUDA state, and one blocking call does not hold up the session's other threads. The session's
// reading thread posts each call, with a copy of its payload, and goes on reading.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "common/frame.h"

namespace gvirtus {

class Executor {
 public:
  // Runs a posted call with the place it arrived in (the session's order); called on the
  // executor's thread.
  using Run = std::function<void(const FrameHeader&, std::span<const std::byte>, uint64_t order)>;

  explicit Executor(Run run);
  // An executor without a thread of its own: the thread that calls run_here() serves it (the
  // reading thread that served a client thread inline goes on serving it, so that what CUDA keeps
  // per host thread - the current context, a stream capture - stays where it was made).
  struct OnCallingThread {};
  Executor(Run run, OnCallingThread);
  // Lets the calls already posted finish, then stops the thread (one of its own: joined; the
  // calling thread's: run_here() returns).
  ~Executor();

  // Runs the posted calls on the calling thread until stop() and the queue is empty (an executor
  // made OnCallingThread only).
  void run_here();
  void stop();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Queues a call; copies the payload (into a recycled buffer: no allocation once warm).
  void post(const FrameHeader& header, std::span<const std::byte> payload, uint64_t order);

  // Whether a call is queued or running.
  bool busy() const;

 private:
  struct Pending {
    FrameHeader header;
    std::vector<std::byte> payload;
    uint64_t order;
  };

  void loop();

  Run run_;
  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  std::vector<std::vector<std::byte>> spare_;  // payload buffers to reuse
  bool running_call_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once everything it uses exists
};

}  // namespace gvirtus

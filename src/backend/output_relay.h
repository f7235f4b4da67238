// The worker's output relayed to the application: what the backend's worker process prints while
// it serves a session goes to the application's stdout and stderr, as it would natively. That is
// above all the device's printf and assertion messages, which the CUDA driver prints to its
// process's stdout and stderr when it flushes them (at a synchronisation, a blocking copy, a
// launch, a module load or unload, a context's destruction, before a stream callback), and any
// message the driver or a library prints.
//
// The worker's fds 1 and 2 become the write ends of two pipes. A reader thread empties the pipes
// as they fill, so that a writer (the driver flushing a megabyte of printf) never blocks, and
// holds what it read, in order, up to kMaxHeldBytes; beyond that the rest of a stream is dropped
// and a note says how much. Before each synchronous reply of a plugin call the session drains
// (drain()): stdio's buffers are flushed, the pipes read to their end, and what is held is handed
// to the session, which sends it ahead of the reply (protocol/output_frames.h). When nothing was
// printed, as before almost every reply, a drain costs one epoll_wait() that finds nothing; before
// the reply of a call that prints nothing itself (a query), drain_taken() costs no system call.
// So the output of a synchronisation reaches the application before the synchronisation returns,
// as natively. Output goes to the client only ahead of a reply it waits for: a client that waits
// for nothing is never sent anything it would have to read.
//
// gvirtus's own log lines (every copy of the logger: GVIRTUS_LOG_FD, common/log.h) and sanitizer
// reports keep going to the original stderr. When the
// relay ends (after the session: the plugins' teardown may print too), the original fds come back
// and what was never drained is written there, so nothing is lost.
//
// One per worker process (it takes over the process's fds 1 and 2); never in a process that
// serves sessions in-process (tests, the fuzzer).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/function_ref.h"
#include "common/unique_fd.h"
#include "protocol/output_frames.h"

namespace gvirtus {

class OutputRelay {
 public:
  // What may wait for the client's next synchronous reply, both streams together.
  static constexpr size_t kMaxHeldBytes = size_t{64} << 20;

  using Sink = FunctionRef<void(OutputStream, std::string_view)>;

  // Takes over fds 1 and 2. Throws Error(kFailed) naming what failed; nothing has changed then.
  // Sets GVIRTUS_LOG_FD: make it while the process has one thread.
  OutputRelay();
  // Gives fds 1 and 2 back and writes there what was never drained. Never throws.
  ~OutputRelay();
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  // Hands everything printed so far to `sink`, in the order it was printed per stream, and
  // forgets it. Thread-safe: drains of several threads hand their output over one after the
  // other. What `sink` throws propagates; what it was handed is then forgotten all the same.
  void drain(Sink sink);
  // drain() before the reply of a call that printed nothing itself (BackendPlugin::quiet), without
  // a system call: it hands over what stdio's buffers hold and what the reader thread took from
  // the pipes, if anything, and otherwise returns at once. What another thread wrote to a pipe
  // a moment ago and the reader thread has not taken yet waits for the next drain.
  void drain_taken(Sink sink);

 private:
  struct Chunk {
    OutputStream stream;
    std::string bytes;
  };
  static constexpr size_t kStreams = 2;

  // Counts a thread that may hold output read from the pipes and not yet held or sent.
  class Busy {
   public:
    explicit Busy(std::atomic<int>& count) : count_(count) { count_.fetch_add(1); }
    ~Busy() { count_.fetch_sub(1); }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    std::atomic<int>& count_;
  };

  // True only when nothing printed so far is unsent: the pipes are empty, nothing is held, and
  // no thread is between reading the pipes and holding or sending what it read.
  bool nothing_printed();
  void run_reader();
  // Reads what the pipes hold now, without waiting. mutex_ held.
  void read_available_locked();
  void read_pipe_locked(size_t index);
  void hold_locked(size_t index, const char* bytes, size_t count);  // index: of pipe_
  // Appends each stream's note on what was dropped, then resets the counts. mutex_ held.
  void note_dropped_locked();

  UniqueFd original_[kStreams];  // the worker's fds 1 and 2 before the relay
  UniqueFd pipe_[kStreams];      // read ends, non-blocking
  UniqueFd wake_read_, wake_write_;
  UniqueFd ready_;    // an epoll set of the pipes, asked without waiting by drain()
  std::mutex mutex_;  // guards what follows and the reads of pipe_
  std::deque<Chunk> held_;
  size_t held_bytes_ = 0;
  uint64_t dropped_[kStreams] = {0, 0};
  std::atomic<bool> holding_{false};  // held_ is not empty, or a note on dropped output is owed
  std::atomic<int> busy_{0};          // Busy threads
  std::thread reader_;
};

}  // namespace gvirtus

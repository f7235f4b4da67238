#include "backend/output_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio_ext.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "common/error.h"
#include "common/log.h"

// Sanitizer runtimes, when linked in (the sanitized test pass), report to this fd: the worker's
// original stderr, not the client's. Weak: absent from ordinary builds.
extern "C" void __sanitizer_set_report_fd(void* fd) __attribute__((weak));

namespace gvirtus {
namespace {

constexpr OutputStream kStreamOf[] = {OutputStream::kStdout, OutputStream::kStderr};
// Pipes this large take a printf buffer's flush (1 MiB by default) in few wake-ups of the reader.
constexpr int kPipeBytes = 1 << 20;

UniqueFd duplicate(int fd, const char* what) {
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0)
    raise_errno(std::string("relaying the worker's output: duplicating ") + what, errno);
  return UniqueFd(copy);
}

// Whether a stdio stream's buffer holds bytes not yet written to its fd (a library's fwrite to a
// pipe is buffered). Under the stream's lock: a thread may be writing to it.
bool stdio_holds(FILE* stream) {
  ::flockfile(stream);
  const bool holds = ::__fpending(stream) != 0;
  ::funlockfile(stream);
  return holds;
}

// Makes a pipe; returns its read end (non-blocking) and write end (blocking: a writer that found
// it full would lose what it printed).
std::pair<UniqueFd, UniqueFd> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) raise_errno("relaying the worker's output: pipe", errno);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  (void)::fcntl(write_end.get(), F_SETPIPE_SZ, kPipeBytes);  // best effort: a smaller one works
  if (::fcntl(read_end.get(), F_SETFL, O_NONBLOCK) != 0) {
    raise_errno("relaying the worker's output: a non-blocking pipe", errno);
  }
  return {std::move(read_end), std::move(write_end)};
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere left to put it
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

OutputRelay::OutputRelay() {
  UniqueFd original[kStreams] = {duplicate(STDOUT_FILENO, "stdout"),
                                 duplicate(STDERR_FILENO, "stderr")};
  auto [out_read, out_write] = make_pipe();
  auto [err_read, err_write] = make_pipe();
  auto [wake_read, wake_write] = make_pipe();
  std::fflush(stdout);
  std::fflush(stderr);
  if (::dup2(out_write.get(), STDOUT_FILENO) < 0) {
    raise_errno("relaying the worker's output: taking over stdout", errno);
  }
  if (::dup2(err_write.get(), STDERR_FILENO) < 0) {
    const int err = errno;
    (void)::dup2(original[0].get(), STDOUT_FILENO);
    raise_errno("relaying the worker's output: taking over stderr", err);
  }
  original_[0] = std::move(original[0]);
  original_[1] = std::move(original[1]);
  pipe_[0] = std::move(out_read);
  pipe_[1] = std::move(err_read);
  wake_read_ = std::move(wake_read);
  wake_write_ = std::move(wake_write);
  ready_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
  for (size_t i = 0; ready_.valid() && i < kStreams; ++i) {
    epoll_event event{};
    event.events = EPOLLIN;
    if (::epoll_ctl(ready_.get(), EPOLL_CTL_ADD, pipe_[i].get(), &event) != 0) ready_.reset();
  }
  set_process_log_fd(original_[1].get());  // the worker has one thread yet
  if (__sanitizer_set_report_fd != nullptr) {
    __sanitizer_set_report_fd(reinterpret_cast<void*>(static_cast<intptr_t>(original_[1].get())));
  }
  reader_ = std::thread([this] { run_reader(); });
}

OutputRelay::~OutputRelay() {
  const char wake = 1;
  (void)!::write(wake_write_.get(), &wake, 1);
  reader_.join();
  std::fflush(stdout);
  std::fflush(stderr);
  // The pipes' write ends close as fds 1 and 2 become the originals again: reading to the end
  // below then finds all that was ever written.
  (void)::dup2(original_[0].get(), STDOUT_FILENO);
  (void)::dup2(original_[1].get(), STDERR_FILENO);
  if (__sanitizer_set_report_fd != nullptr) {
    __sanitizer_set_report_fd(reinterpret_cast<void*>(static_cast<intptr_t>(STDERR_FILENO)));
  }
  std::lock_guard lock(mutex_);
  read_available_locked();
  note_dropped_locked();
  for (const Chunk& chunk : held_) {
    write_all(chunk.stream == OutputStream::kStdout ? STDOUT_FILENO : STDERR_FILENO, chunk.bytes);
  }
  // Log lines still go to the copy of stderr (GVIRTUS_LOG_FD), which is never changed again: the
  // environment cannot be written while other threads may read it. The worker exits next.
  (void)original_[1].release();
}

bool OutputRelay::nothing_printed() {
  if (!ready_.valid()) return false;
  epoll_event events[kStreams];
  if (::epoll_wait(ready_.get(), events, kStreams, 0) != 0) return false;  // ready, or failed
  // The pipes are empty. What was read from them is held, or on its way to being held or sent
  // by a thread counted in busy_, which incremented it before reading.
  return busy_.load() == 0 && !holding_.load();
}

void OutputRelay::drain(Sink sink) {
  // Flushed before taking the lock: a flush may wait for a full pipe, which only the reader
  // thread, taking the lock, empties.
  std::fflush(stdout);
  std::fflush(stderr);
  // The common case, before every synchronous reply, with one system call and no lock.
  if (nothing_printed()) return;
  Busy busy(busy_);  // until what this drain read is sent: later drains wait for it
  std::lock_guard lock(mutex_);
  read_available_locked();
  note_dropped_locked();
  std::deque<Chunk> chunks;
  chunks.swap(held_);
  held_bytes_ = 0;
  holding_.store(false);
  for (const Chunk& chunk : chunks) sink(chunk.stream, chunk.bytes);
}

void OutputRelay::drain_taken(Sink sink) {
  if (stdio_holds(stdout) || stdio_holds(stderr) || holding_.load() || busy_.load() != 0) {
    drain(sink);
  }
}

void OutputRelay::run_reader() {
  pollfd fds[kStreams + 1] = {
      {pipe_[0].get(), POLLIN, 0}, {pipe_[1].get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
  for (;;) {
    const int ready = ::poll(fds, kStreams + 1, -1);
    if (ready < 0) {
      // Only a transient failure (EINTR, ENOMEM) can come here: wait and go on, since a writer
      // blocks on a full pipe that nobody empties. Written straight to the backend's stderr:
      // this thread never reads the environment (GVIRTUS_LOG_FD), which the session's start
      // still writes (CUDA_VISIBLE_DEVICES) while it runs.
      if (errno != EINTR) {
        constexpr std::string_view kNote =
            "gvirtus-worker: the output relay's poll failed; trying again\n";
        write_all(original_[1].get(), kNote);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      continue;
    }
    if (fds[kStreams].revents != 0) return;
    Busy busy(busy_);
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < kStreams; ++i) {
      if (fds[i].revents & POLLIN) read_pipe_locked(i);
      // A pipe nobody writes to any more (fds 1 or 2 closed by someone) is not watched again.
      if ((fds[i].revents & (POLLHUP | POLLERR)) && !(fds[i].revents & POLLIN)) fds[i].fd = -1;
    }
  }
}

void OutputRelay::read_available_locked() {
  for (size_t i = 0; i < kStreams; ++i) read_pipe_locked(i);
}

void OutputRelay::read_pipe_locked(size_t index) {
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(pipe_[index].get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // empty (EAGAIN), or every write end closed
    hold_locked(index, buffer, static_cast<size_t>(n));
  }
}

void OutputRelay::hold_locked(size_t index, const char* bytes, size_t count) {
  const OutputStream stream = kStreamOf[index];
  if (dropped_[index] > 0 || held_bytes_ + count > kMaxHeldBytes) {
    dropped_[index] += count;  // once a stream drops, it drops until the next drain: no holes
    holding_.store(true);      // the note is owed
    return;
  }
  if (held_.empty() || held_.back().stream != stream) held_.push_back(Chunk{stream, {}});
  held_.back().bytes.append(bytes, count);
  held_bytes_ += count;
  holding_.store(true);
}

void OutputRelay::note_dropped_locked() {
  for (size_t i = 0; i < kStreams; ++i) {
    if (dropped_[i] == 0) continue;
    held_.push_back(
        Chunk{kStreamOf[i], "\n[gvirtus: " + std::to_string(dropped_[i]) +
                                " bytes of the device's output were dropped here: more than " +
                                std::to_string(kMaxHeldBytes >> 20) +
                                " MiB waited for the application's next synchronous call]\n"});
    dropped_[i] = 0;
  }
}

}  // namespace gvirtus

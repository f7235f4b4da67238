#include "communicators/shm/shm_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "common/unique_fd.h"
#include "communicators/shm/shm_connection.h"
#include "communicators/shm/shm_futex.h"
#include "communicators/shm/shm_heartbeat.h"
#include "communicators/shm/shm_layout.h"
#include "communicators/shm/shm_link.h"
#include "communicators/shm/shm_mapping.h"

namespace gvirtus::shm {
namespace {

using namespace std::chrono_literals;

constexpr auto kFirstSleep = 50us;
constexpr auto kLongestSleep = 1ms;
constexpr auto kWatchActive =
    1ms;                          // the listener's watcher, while a client comes or a session runs
constexpr auto kWatchIdle = 5ms;  // ... and while nobody is there

std::string url(const std::string& file) {
  return "shm+file://" + file;
}

std::chrono::milliseconds heartbeat_period(std::chrono::milliseconds dead_after) {
  return std::clamp(dead_after / 8, std::chrono::milliseconds(1), std::chrono::milliseconds(250));
}

void sleep_for(std::chrono::nanoseconds d) {
  std::this_thread::sleep_for(d);
}

// One side of a file-mode session.
class FileLink final : public ShmLink {
 public:
  FileLink(int side, uint32_t generation, Mapping mapping, uint64_t ring_bytes,
           const ShmOptions& options, std::string peer)
      : ShmLink(ring_bytes),
        side_(side),
        generation_(generation),
        mapping_(std::move(mapping)),
        period_(heartbeat_period(options.dead_after)),
        peer_pulse_(options.dead_after),
        peer_(std::move(peer)),
        created_forks_(forks_so_far()),
        used_epoch_(~uint64_t{0}) {
    heartbeat_ = std::make_unique<Heartbeat>(header()->heartbeat[side_], period_);
  }

  ~FileLink() override {
    // A connection accepted here and handed to a forked worker, unused here, is not ours to end.
    const bool used_here = used_epoch_.load() == process_epoch();
    if (used_here || forks_so_far() == created_forks_) mark_closed();
    heartbeat_.reset();
  }

  SegmentHeader* header() const override { return static_cast<SegmentHeader*>(mapping_.base()); }
  uint64_t mapped_bytes() const override { return mapping_.bytes(); }
  int side() const override { return side_; }
  // The futex doorbell wakes a sleeper in this kernel only: a peer in a VM (ivshmem) never hears
  // it and sleeps out its timed sleep, and a guest cannot wait on its BAR at all (no_futex_). So
  // file mode rings where that is cheap and may help (both sides on one host) but counts on
  // its timed sleeps, and says it has no doorbell.
  void ring(int r) override {
    if (!no_futex_.load(std::memory_order_relaxed) && !wake_sleeper(peer_waiting(r))) {
      no_futex_.store(true, std::memory_order_relaxed);
    }
  }
  bool has_doorbell() const override { return false; }

  void sleep(int r, const Deadline& deadline, int round) override {
    auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(kFirstSleep) *
             (int64_t{1} << std::min(round, 5));
    d = std::min<std::chrono::nanoseconds>(d, kLongestSleep);
    if (deadline)
      d = std::min<std::chrono::nanoseconds>(d, *deadline - std::chrono::steady_clock::now());
    if (d.count() <= 0) return;
    if (no_futex_.load(std::memory_order_relaxed) ||
        futex_wait(own_waiting(r), 1, d) == FutexWait::kUnsupported) {
      no_futex_.store(true, std::memory_order_relaxed);
      sleep_for(d);
    }
  }

  bool peer_gone() override {
    SegmentHeader* h = header();
    if (h->generation.load(std::memory_order_acquire) != generation_ ||
        h->state.load(std::memory_order_acquire) != kConnected) {
      return true;
    }
    const int peer = 1 - side_;
    if (h->closed[peer].load(std::memory_order_acquire) != 0) return true;
    std::lock_guard lock(pulse_mutex_);
    return peer_pulse_.stopped(h->heartbeat[peer].load(std::memory_order_relaxed));
  }

  void shutdown() override {
    mark_closed();
    // Our sleepers fail at once (the connection set its flag before this fence); a peer on this
    // host looks at the closed word at once.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (no_futex_.load(std::memory_order_relaxed)) return;
    for (int r : {kClientToServer, kServerToClient}) {
      (void)wake_sleeper(own_waiting(r));
      (void)wake_sleeper(peer_waiting(r));
    }
  }

  void on_use() override {
    const uint64_t epoch = process_epoch();
    if (used_epoch_.load(std::memory_order_relaxed) == epoch) return;
    std::lock_guard lock(pulse_mutex_);
    if (used_epoch_.load(std::memory_order_relaxed) == epoch) return;
    if (!heartbeat_->here()) {
      heartbeat_ = std::make_unique<Heartbeat>(header()->heartbeat[side_], period_);
    }
    used_epoch_.store(epoch);
  }

  std::string peer_name() const override { return peer_; }

 private:
  void mark_closed() {
    SegmentHeader* h = header();
    if (h->generation.load(std::memory_order_acquire) == generation_) {
      h->closed[side_].store(1, std::memory_order_release);
    }
  }

  int side_;
  uint32_t generation_;
  Mapping mapping_;
  std::chrono::milliseconds period_;
  std::mutex pulse_mutex_;
  Pulse peer_pulse_;
  std::string peer_;
  uint64_t created_forks_;
  std::atomic<uint64_t> used_epoch_;
  std::atomic<bool> no_futex_{false};     // the kernel refused a futex on this mapping
  std::unique_ptr<Heartbeat> heartbeat_;  // last: stops before the mapping goes
};

UniqueFd open_file(const std::string& file, int flags, const std::string& what) {
  UniqueFd fd(::open(file.c_str(), flags | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    raise(what == "listen" ? ErrorKind::kFailed : ErrorKind::kDisconnected,
          "cannot " + what + " on " + url(file) + ": " + std::strerror(errno));
  }
  return fd;
}

uint64_t file_bytes(int fd, const std::string& file) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) raise_errno("fstat " + file, errno);
  return static_cast<uint64_t>(st.st_size);
}

// The listener's helper: heartbeat, claim signal, and session reset. It touches only the shared
// header and the eventfd (no locks, no logging), so a fork() while it runs is harmless.
class Watcher {
 public:
  Watcher(SegmentHeader* header, int event_fd, const ShmOptions& options)
      : header_(header), event_fd_(event_fd), options_(options), thread_([this] { run(); }) {}
  ~Watcher() {
    stop_.store(true);
    thread_.join();
  }

 private:
  void run() {
    uint32_t signalled = ~0u;
    uint32_t watched = ~0u;
    Pulse pulses[2] = {Pulse(options_.dead_after), Pulse(options_.dead_after)};
    std::optional<std::chrono::steady_clock::time_point> ended;
    while (!stop_.load()) {
      header_->listener_heartbeat.fetch_add(1, std::memory_order_relaxed);
      const uint32_t state = header_->state.load(std::memory_order_acquire);
      const uint32_t generation = header_->generation.load(std::memory_order_acquire);
      if (state == kClaimed && signalled != generation) {
        signalled = generation;
        const uint64_t one = 1;
        (void)!::write(event_fd_, &one, sizeof one);
      }
      // A client that gave up before it was accepted: free the segment for the next one.
      if (state == kClaimed && header_->closed[kClientSide].load(std::memory_order_acquire) != 0) {
        reset_session(header_, options_.ring_bytes);
      }
      if (state == kConnected) {
        if (watched != generation) {
          watched = generation;
          pulses[0] = Pulse(options_.dead_after);
          pulses[1] = Pulse(options_.dead_after);
          ended.reset();
        }
        bool gone[2];
        for (int side : {kServerSide, kClientSide}) {
          const bool stopped =
              pulses[side].stopped(header_->heartbeat[side].load(std::memory_order_relaxed));
          gone[side] = header_->closed[side].load(std::memory_order_acquire) != 0 || stopped;
        }
        const auto now = std::chrono::steady_clock::now();
        if ((gone[0] || gone[1]) && !ended) ended = now;
        // Both ends finished, or one gone and the other given dead_after to notice.
        if ((gone[0] && gone[1]) || (ended && now - *ended > options_.dead_after)) {
          reset_session(header_, options_.ring_bytes);
        }
      }
      sleep_for(state == kListening ? std::chrono::nanoseconds(kWatchIdle)
                                    : std::chrono::nanoseconds(kWatchActive));
    }
  }

  SegmentHeader* header_;
  int event_fd_;
  ShmOptions options_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts once the rest is ready
};

class FileListener final : public Listener {
 public:
  FileListener(UniqueFd fd, Mapping mapping, const ShmOptions& options, size_t max_message_bytes)
      : fd_(std::move(fd)),
        mapping_(std::move(mapping)),
        event_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        options_(options),
        max_message_bytes_(max_message_bytes),
        owner_(::getpid()) {
    if (!event_.valid()) raise_errno("shm: eventfd", errno);
    watcher_ = std::make_unique<Watcher>(header(), event_.get(), options_);
  }

  ~FileListener() override {
    if (owner_ != ::getpid()) {
      (void)watcher_.release();  // its thread lives in the parent; the parent still serves
      mapping_.reset();
      return;
    }
    watcher_.reset();
    header()->state.store(kOffline, std::memory_order_release);
  }

  std::unique_ptr<Connection> accept() override {
    for (;;) {
      pollfd p{event_.get(), POLLIN, 0};
      if (::poll(&p, 1, -1) < 0 && errno != EINTR) raise_errno("poll on " + local_name(), errno);
      uint64_t count;
      (void)!::read(event_.get(), &count, sizeof count);
      SegmentHeader* h = header();
      if (h->state.load(std::memory_order_acquire) != kClaimed) continue;
      const uint32_t generation = h->generation.load(std::memory_order_acquire);
      // The session's own mapping, so that it outlives this listener in a forked worker.
      Mapping mapping(fd_.get(), mapping_.bytes(), local_name());
      auto link =
          std::make_unique<FileLink>(kServerSide, generation, std::move(mapping),
                                     options_.ring_bytes, options_, local_name() + " (client)");
      h->state.store(kConnected, std::memory_order_release);
      return std::make_unique<ShmConnection>(std::move(link), max_message_bytes_, options_.spin);
    }
  }

  int wait_fd() const override { return event_.get(); }
  std::string local_name() const override { return url(options_.file); }

 private:
  SegmentHeader* header() const { return static_cast<SegmentHeader*>(mapping_.base()); }

  UniqueFd fd_;  // holds the flock: one listener per file
  Mapping mapping_;
  UniqueFd event_;
  ShmOptions options_;
  size_t max_message_bytes_;
  pid_t owner_;
  std::unique_ptr<Watcher> watcher_;  // last: stops first
};

}  // namespace

std::unique_ptr<Listener> serve_file(const ShmOptions& options, size_t max_message_bytes) {
  const std::string name = url(options.file);
  UniqueFd fd = open_file(options.file, O_RDWR | O_CREAT, "listen");
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    raise(ErrorKind::kFailed,
          "cannot listen on " + name +
              (errno == EWOULDBLOCK ? ": another backend serves it"
                                    : ": flock: " + std::string(std::strerror(errno))));
  }
  const uint64_t need = segment_bytes(options.ring_bytes);
  uint64_t size = file_bytes(fd.get(), options.file);
  if (size < need) {
    struct stat st {};
    ::fstat(fd.get(), &st);
    if (!S_ISREG(st.st_mode) || ::ftruncate(fd.get(), static_cast<off_t>(need)) != 0) {
      raise(ErrorKind::kFailed, "cannot listen on " + name + ": it has " + std::to_string(size) +
                                    " bytes, rings of " + std::to_string(options.ring_bytes) +
                                    " need " + std::to_string(need));
    }
    size = need;
  }
  Mapping mapping(fd.get(), size, name);
  auto* header = static_cast<SegmentHeader*>(mapping.base());
  if (header->magic != kMagic) init_header(mapping.base(), options.ring_bytes);
  reset_session(header, options.ring_bytes);  // a new generation: stale clients see the change
  return std::make_unique<FileListener>(std::move(fd), std::move(mapping), options,
                                        max_message_bytes);
}

std::unique_ptr<Connection> connect_file(const ShmOptions& options, size_t max_message_bytes,
                                         std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string name = url(options.file);
  UniqueFd fd = open_file(options.file, O_RDWR, "connect");
  const uint64_t size = file_bytes(fd.get(), options.file);
  if (size < kHeaderBytes) {
    raise(ErrorKind::kDisconnected, "cannot connect to " + name + ": no backend has set it up (" +
                                        std::to_string(size) + " bytes)");
  }
  Mapping mapping(fd.get(), size, name);
  auto* h = static_cast<SegmentHeader*>(mapping.base());
  if (h->magic != kMagic) {
    raise(ErrorKind::kDisconnected, "cannot connect to " + name + ": no backend has set it up");
  }
  validate_header(h, size, name);

  Pulse listener(options.dead_after);
  auto check_listener = [&] {
    if (listener.stopped(h->listener_heartbeat.load(std::memory_order_relaxed))) {
      raise(ErrorKind::kDisconnected, "cannot connect to " + name +
                                          ": its backend stopped (no heartbeat for " +
                                          std::to_string(options.dead_after.count()) + " ms)");
    }
  };
  for (;;) {  // claim it
    uint32_t state = h->state.load(std::memory_order_acquire);
    if (state == kOffline) {
      raise(ErrorKind::kDisconnected, "cannot connect to " + name + ": no backend listens there");
    }
    if (state == kListening &&
        h->state.compare_exchange_strong(state, kClaimed, std::memory_order_acq_rel)) {
      break;
    }
    check_listener();
    if (std::chrono::steady_clock::now() >= deadline) {
      raise(ErrorKind::kTimedOut, "cannot connect to " + name + ": busy with another session for " +
                                      std::to_string(timeout.count()) + " ms");
    }
    sleep_for(kLongestSleep);
  }
  const uint32_t generation = h->generation.load(std::memory_order_acquire);
  // The ring size the listener set up; it reset the header with it before this claim succeeded.
  const uint64_t ring_bytes = validate_header(h, size, name);
  auto link = std::make_unique<FileLink>(kClientSide, generation, std::move(mapping), ring_bytes,
                                         options, name);
  for (;;) {  // until accepted; on failure the link's destructor marks this side closed
    const uint32_t state = h->state.load(std::memory_order_acquire);
    if (h->generation.load(std::memory_order_acquire) != generation ||
        (state != kClaimed && state != kConnected)) {
      raise(ErrorKind::kDisconnected, "cannot connect to " + name + ": the backend reset it");
    }
    if (state == kConnected) break;
    check_listener();
    if (std::chrono::steady_clock::now() >= deadline) {
      raise(ErrorKind::kTimedOut, "cannot connect to " + name + ": not accepted within " +
                                      std::to_string(timeout.count()) + " ms");
    }
    sleep_for(kFirstSleep);
  }
  return std::make_unique<ShmConnection>(std::move(link), max_message_bytes, options.spin);
}

}  // namespace gvirtus::shm

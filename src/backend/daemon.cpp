#include "backend/daemon.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <map>
#include <thread>
#include <vector>

#include "backend/module_cache_place.h"
#include "backend/plugin_registry.h"
#include "backend/session.h"
#include "backend/session_table.h"
#include "common/error.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/unique_fd.h"
#include "communicators/factory.h"
#include "protocol/auth.h"

namespace gvirtus {
namespace {

constexpr auto kWorkerGracePeriod = std::chrono::seconds(5);

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  return set;
}

// Tells a client it was turned away, best effort: it may already be gone.
void refuse_overloaded(Connection& connection, uint32_t max_sessions) {
  const std::string why = "the backend serves its maximum of " + std::to_string(max_sessions) +
                          " sessions; try again later";
  FrameHeader h;
  h.flags = kFlagReply | kFlagError;
  h.status = static_cast<uint32_t>(ErrorKind::kOverloaded);
  h.payload_bytes = static_cast<uint32_t>(why.size());
  const EncodedHeader header = encode_header(h);
  const ByteView pieces[] = {header.view(),
                             ByteView(reinterpret_cast<const std::byte*>(why.data()), why.size())};
  try {
    connection.send(pieces);
  } catch (const Error&) {
  }
}

class Daemon {
 public:
  explicit Daemon(const Config& config)
      : config_(config), sessions_(session_table_capacity(config.limits.max_sessions)) {
    sessions_.set_max_sessions(config.limits.max_sessions);
    // Before listening: a missing, unsafe or short secret stops the daemon with the reason.
    secret_ = configured_secret(config, SecretReader::kBackend);
    module_cache_ = settle_module_cache(config.module_cache);
    for (const EndpointConfig& endpoint : config.endpoints) {
      for (const std::string& name : endpoint.plugins()) plugins_.load(name);
    }
    for (const EndpointConfig& endpoint : config.endpoints) {
      auto communicator = make_communicator(endpoint, config.limits.max_frame_bytes);
      listeners_.push_back(communicator->serve());
      listeners_.back()->hand_off_to_workers();  // each session runs in a forked worker
      GVIRTUS_LOG(kNotice) << "listening on " << listeners_.back()->local_name()
                           << " (plugins: " << plugins_.names() << "; "
                           << (secret_ ? "clients must authenticate" : "no authentication") << ")";
    }
    const sigset_t set = handled_signals();
    sigprocmask(SIG_BLOCK, &set, &saved_mask_);
    signal_fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_.valid()) raise_errno("signalfd", errno);
  }

  int run() {
    std::vector<pollfd> fds;
    while (!stopping_) {
      fds.clear();
      fds.push_back({signal_fd_.get(), POLLIN, 0});
      for (const auto& l : listeners_) fds.push_back({l->wait_fd(), POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        raise_errno("poll", errno);
      }
      if (fds[0].revents != 0) handle_signals();
      for (size_t i = 1; i < fds.size() && !stopping_; ++i) {
        if (fds[i].revents != 0) accept_one(*listeners_[i - 1]);
      }
    }
    stop_workers();
    GVIRTUS_LOG(kNotice) << "stopped";
    return 0;
  }

 private:
  void handle_signals() {
    signalfd_siginfo info;
    while (::read(signal_fd_.get(), &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGCHLD) {
        reap(false);
      } else {
        GVIRTUS_LOG(kNotice) << "signal " << info.ssi_signo << ": stopping";
        stopping_ = true;
      }
    }
  }

  void reap(bool block) {
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, block ? 0 : WNOHANG);
      if (pid <= 0) return;
      if (const auto it = workers_.find(pid); it != workers_.end()) {
        sessions_.release(it->second);
        workers_.erase(it);
      }
      if (WIFSIGNALED(status)) {
        GVIRTUS_LOG(kInfo) << "worker " << pid << " ended by signal " << WTERMSIG(status);
      } else {
        GVIRTUS_LOG(kInfo) << "worker " << pid << " exited with status " << WEXITSTATUS(status);
      }
      if (block) return;
    }
  }

  void accept_one(Listener& listener) {
    std::unique_ptr<Connection> connection;
    try {
      connection = listener.accept();
    } catch (const Error& e) {
      GVIRTUS_LOG(kWarning) << "accept on " << listener.local_name() << " failed: " << e.what();
      return;
    }
    // Beyond max_sessions a few more are accepted, for status queries only (session_table.h).
    const bool status_only = workers_.size() >= config_.limits.max_sessions;
    if (workers_.size() >= uint64_t{config_.limits.max_sessions} + kStatusOnlySessions) {
      GVIRTUS_LOG(kWarning) << "refusing " << connection->peer_name() << ": " << workers_.size()
                            << " sessions already";
      refuse_overloaded(*connection, config_.limits.max_sessions);
      return;
    }
    // No slot (more sessions than a status reply lists): served, but not shown by status queries.
    const int slot = sessions_.claim();
    const pid_t pid = ::fork();
    if (pid < 0) {
      GVIRTUS_LOG(kError) << "fork for " << connection->peer_name() << ": " << std::strerror(errno);
      sessions_.release(slot);  // ignores -1
      return;
    }
    if (pid == 0) run_worker(*connection, slot, status_only);  // never returns
    workers_.emplace(pid, slot);
    GVIRTUS_LOG(kInfo) << "worker " << pid << " serves " << connection->peer_name();
    // The parent's copy of the connection closes here; the worker keeps its own.
  }

  [[noreturn]] void run_worker(Connection& connection, int slot, bool status_only) {
    // Die with the daemon even if it is killed with SIGKILL, so no worker is ever orphaned.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() == 1) ::_exit(0);
    listeners_.clear();
    signal_fd_.reset();
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_IGN);  // a Ctrl-C reaches the daemon, which then stops the workers
    sigprocmask(SIG_SETMASK, &saved_mask_, nullptr);
    set_log_program("gvirtus-worker");
    set_current_session_slot(&sessions_, slot, status_only);
    // The worker's copy of the secret moves into its session, which wipes it once the client is
    // authenticated.
    const int status =
        run_session(connection, plugins_, config_.limits, std::move(secret_), module_cache_);
    // _exit runs no destructors: end the connection so that the peer sees it now. Only the
    // process's death would tell otherwise, which shm's file mode notices after dead_after_ms,
    // keeping the segment from the next client that long.
    connection.shutdown();
    ::_exit(status);
  }

  void stop_workers() {
    listeners_.clear();
    for (const auto& [pid, slot] : workers_) ::kill(pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + kWorkerGracePeriod;
    while (!workers_.empty() && std::chrono::steady_clock::now() < deadline) {
      reap(false);
      if (!workers_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (const auto& [pid, slot] : workers_) {
      GVIRTUS_LOG(kWarning) << "worker " << pid << " ignored SIGTERM; killing it";
      ::kill(pid, SIGKILL);
    }
    while (!workers_.empty()) reap(true);
  }

  const Config& config_;
  std::optional<Secret> secret_;
  ModuleCacheConfig module_cache_;  // settled: its place found, or off
  PluginRegistry plugins_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  UniqueFd signal_fd_;
  sigset_t saved_mask_{};
  SessionTable sessions_;         // shared with the workers: what status queries report
  std::map<pid_t, int> workers_;  // worker pid -> its slot in sessions_
  bool stopping_ = false;
};

}  // namespace

int run_daemon(const Config& config) {
  Daemon daemon(config);
  return daemon.run();
}

}  // namespace gvirtus

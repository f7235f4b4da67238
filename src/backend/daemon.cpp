#include "backend/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "backend/metrics_server.h"
#include "backend/metrics_table.h"
#include "backend/module_cache_place.h"
#include "backend/output_relay.h"
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
// How long the metrics process may take to say whether it listens.
constexpr auto kMetricsStartTimeout = std::chrono::seconds(10);
// A metrics process that dies sooner than this after its start is not started again: it would
// only die again (its address taken, say), and the daemon must not spin.
constexpr auto kMetricsRestartAfter = std::chrono::seconds(10);

// The transport a listener serves, from its name ("tcp://...", "shm+file://..." -> "shm").
std::string_view transport_of(const std::string& local_name) {
  return std::string_view(local_name).substr(0, local_name.find_first_of("+:"));
}

// Reads the metrics process's one line ("ok PORT" / "error WHY") from `fd`, for at most
// kMetricsStartTimeout; empty if none came (the process died or hung).
std::string read_ready_line(int fd) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + kMetricsStartTimeout;
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return {};
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return {};
    char buffer[256];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(buffer, static_cast<size_t>(n));
  }
  return line.substr(0, line.find('\n'));
}

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
    // SIGINT and SIGTERM are taken through the signal descriptor from before the first
    // "listening on" line: a supervisor (or a test) that signals the daemon once it says it
    // listens must find the signals handled, not their default action ending it.
    const sigset_t set = handled_signals();
    sigprocmask(SIG_BLOCK, &set, &saved_mask_);
    signal_fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_.valid()) raise_errno("signalfd", errno);
    for (const EndpointConfig& endpoint : config.endpoints) {
      auto communicator = make_communicator(endpoint, config.limits.max_frame_bytes);
      listeners_.push_back(communicator->serve());
      listeners_.back()->hand_off_to_workers();  // each session runs in a forked worker
      GVIRTUS_LOG(kNotice) << "listening on " << listeners_.back()->local_name()
                           << " (plugins: " << plugins_.names() << "; "
                           << (secret_ ? "clients must authenticate" : "no authentication") << ")";
      metrics_.mark_served(
          MetricsTable::transport_index(transport_of(listeners_.back()->local_name())));
    }
    for (const auto& [id, name] : plugins_.served()) {
      if (!metrics_.name_plugin(id, name)) {
        GVIRTUS_LOG(kWarning) << "metrics: plugin " << name << " is counted as \"other\"";
      }
    }
    set_current_metrics(&metrics_);  // the workers count into it
    // Last: a metrics address that cannot be served stops the daemon before it serves anyone.
    if (!config_.metrics.listen.empty()) start_metrics();
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
      if (pid == metrics_pid_) {
        metrics_ended(status);
        if (block) return;
        continue;
      }
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
      metrics_.count_refused_for_limits(MetricsTable::transport_index(connection->transport()));
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

  // In a freshly forked child (a worker or the metrics process): drops what only the daemon uses
  // and ties the child's life to the daemon's.
  void become_child(const char* program) {
    // Die with the daemon even if it is killed with SIGKILL, so no child is ever orphaned.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() == 1) ::_exit(0);
    listeners_.clear();
    signal_fd_.reset();
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_IGN);  // a Ctrl-C reaches the daemon, which then stops its children
    sigprocmask(SIG_SETMASK, &saved_mask_, nullptr);
    set_log_program(program);
  }

  // Forks the metrics process (backend/metrics_server.h) and waits until it listens. Throws
  // Error, naming metrics.listen, if it cannot.
  void start_metrics() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) raise_errno("pipe for the metrics process", errno);
    UniqueFd read_end(fds[0]);
    UniqueFd write_end(fds[1]);
    const pid_t pid = ::fork();
    if (pid < 0) raise_errno("fork of the metrics process", errno);
    if (pid == 0) {
      become_child("gvirtus-metrics");
      set_current_session_slot(&sessions_, -1);  // reads every session, serves none
      read_end.reset();
      serve_metrics(config_.metrics.listen, metrics_, write_end.release());
      ::_exit(0);
    }
    write_end.reset();
    metrics_pid_ = pid;
    metrics_started_ = std::chrono::steady_clock::now();
    const std::string line = read_ready_line(read_end.get());
    if (line.rfind("ok ", 0) == 0) {
      GVIRTUS_LOG(kNotice) << "metrics on http://"
                           << config_.metrics.listen.substr(0, config_.metrics.listen.rfind(':'))
                           << ":" << line.substr(3) << "/metrics (process " << pid << ")";
      return;
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    metrics_pid_ = -1;
    raise(
        ErrorKind::kInvalidInput,
        config_.source + ": metrics.listen: cannot serve metrics on " + config_.metrics.listen +
            ": " +
            (line.rfind("error ", 0) == 0 ? line.substr(6) : "the metrics process did not start"));
  }

  // The metrics process ended: started again unless the daemon stops or it died young.
  void metrics_ended(int status) {
    metrics_pid_ = -1;
    if (stopping_) return;
    GVIRTUS_LOG(kError) << "the metrics process ended ("
                        << (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                : "status " + std::to_string(WEXITSTATUS(status)))
                        << ")";
    if (std::chrono::steady_clock::now() - metrics_started_ < kMetricsRestartAfter) {
      GVIRTUS_LOG(kError) << "it ended within " << kMetricsRestartAfter.count()
                          << " s of its start: metrics stay off until the backend restarts";
      return;
    }
    try {
      start_metrics();
    } catch (const Error& e) {
      GVIRTUS_LOG(kError) << e.what() << "; metrics stay off until the backend restarts";
    }
  }

  void stop_metrics() {
    ::kill(metrics_pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + kWorkerGracePeriod;
    while (::waitpid(metrics_pid_, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        GVIRTUS_LOG(kWarning) << "the metrics process ignored SIGTERM; killing it";
        ::kill(metrics_pid_, SIGKILL);
        ::waitpid(metrics_pid_, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    metrics_pid_ = -1;
  }

  [[noreturn]] void run_worker(Connection& connection, int slot, bool status_only) {
    become_child("gvirtus-worker");
    set_current_session_slot(&sessions_, slot, status_only);
    // The worker's copy of the secret moves into its session, which wipes it once the client is
    // authenticated.
    std::optional<OutputRelay> relay;
    if (config_.device_output == DeviceOutput::kRelay && !status_only) {
      try {
        relay.emplace();
      } catch (const Error& e) {
        GVIRTUS_LOG(kWarning) << e.what() << "; this session's device output stays in the backend";
      }
    }
    const int status = run_session(connection, plugins_, config_.limits, std::move(secret_),
                                   module_cache_, relay ? &*relay : nullptr);
    // _exit runs no destructors: end the connection so that the peer sees it now. Only the
    // process's death would tell otherwise, which shm's file mode notices after dead_after_ms,
    // keeping the segment from the next client that long.
    connection.shutdown();
    relay.reset();  // then fds 1 and 2 back, and what was never sent written there
    ::_exit(status);
  }

  void stop_workers() {
    listeners_.clear();
    if (metrics_pid_ > 0) stop_metrics();
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
  MetricsTable metrics_;          // shared with the workers and the metrics process
  pid_t metrics_pid_ = -1;        // the metrics process, when one runs
  std::chrono::steady_clock::time_point metrics_started_{};
  bool stopping_ = false;
};

}  // namespace

int run_daemon(const Config& config) {
  Daemon daemon(config);
  return daemon.run();
}

}  // namespace gvirtus

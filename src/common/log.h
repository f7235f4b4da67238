// Logging with levels, quiet by default.
//
//   GVIRTUS_LOG(kInfo) << "listening on " << name;
//
// GVIRTUS_LOGLEVEL selects the level: error, warning, notice (the default), info, debug, trace
// (or 0-5). Notices are the few lines an operator always wants (where the daemon listens, that it
// stopped); nothing in a client's normal run logs at notice or above, so clients are quiet.
// Each line goes to stderr (set_process_log_fd) in one write(), prefixed with the program and pid,
// so lines from the daemon and its workers do not interleave. A disabled level costs one
// comparison.
#pragma once

#include <sstream>
#include <string_view>

namespace gvirtus {

enum class LogLevel { kError = 0, kWarning = 1, kNotice = 2, kInfo = 3, kDebug = 4, kTrace = 5 };

// The active level, read from GVIRTUS_LOGLEVEL once.
LogLevel log_level();
inline bool log_enabled(LogLevel level) {
  return level <= log_level();
}

// Overrides the level (tests, --verbose flags).
void set_log_level(LogLevel level);

// Names this process in log lines ("gvirtus-backend", "gvirtus-worker"); default: program name.
void set_log_program(std::string_view name);

// Where log lines go: stderr, unless GVIRTUS_LOG_FD names another fd, read at each line written,
// since every plugin library carries a copy of this logger of its own. A worker that relays its
// own stderr to the client (backend/output_relay.h) logs to a copy of its original stderr so.
// Sets GVIRTUS_LOG_FD: call only while the process has one thread (setenv is not thread-safe).
void set_process_log_fd(int fd);

class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level) {}
  ~LogLine();
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  std::ostream& stream() { return out_; }

 private:
  LogLevel level_;
  std::ostringstream out_;
};

}  // namespace gvirtus

#define GVIRTUS_LOG(level)                                   \
  if (!::gvirtus::log_enabled(::gvirtus::LogLevel::level)) { \
  } else                                                     \
    ::gvirtus::LogLine(::gvirtus::LogLevel::level).stream()

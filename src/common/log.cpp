#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gvirtus {
namespace {

LogLevel parse_level(const char* text) {
  if (text == nullptr || *text == '\0') return LogLevel::kNotice;
  const std::string_view value(text);
  if (value == "error" || value == "0") return LogLevel::kError;
  if (value == "warning" || value == "warn" || value == "1") return LogLevel::kWarning;
  if (value == "notice" || value == "2") return LogLevel::kNotice;
  if (value == "info" || value == "3") return LogLevel::kInfo;
  if (value == "debug" || value == "4") return LogLevel::kDebug;
  if (value == "trace" || value == "5") return LogLevel::kTrace;
  return LogLevel::kNotice;
}

std::atomic<int>& level_slot() {
  static std::atomic<int> level{static_cast<int>(parse_level(std::getenv("GVIRTUS_LOGLEVEL")))};
  return level;
}

std::string& program_slot() {
  static std::string program = [] {
    const char* name = program_invocation_short_name;
    return std::string(name != nullptr ? name : "gvirtus");
  }();
  return program;
}

constexpr const char* kLogFdVariable = "GVIRTUS_LOG_FD";

int log_fd() {
  const char* text = std::getenv(kLogFdVariable);
  if (text == nullptr || *text == '\0') return STDERR_FILENO;
  char* end = nullptr;
  const long fd = std::strtol(text, &end, 10);
  return *end == '\0' && fd >= 0 && fd < (1 << 20) ? static_cast<int>(fd) : STDERR_FILENO;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kNotice:
      return "notice";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kTrace:
      return "trace";
  }
  return "?";
}

}  // namespace

LogLevel log_level() {
  return static_cast<LogLevel>(level_slot().load(std::memory_order_relaxed));
}

void set_log_level(LogLevel level) {
  level_slot().store(static_cast<int>(level));
}

void set_log_program(std::string_view name) {
  program_slot() = std::string(name);
}

void set_process_log_fd(int fd) {
  ::setenv(kLogFdVariable, std::to_string(fd).c_str(), 1);
}

LogLine::~LogLine() {
  std::string line = program_slot() + "[" + std::to_string(getpid()) + "] " + level_name(level_) +
                     ": " + out_.str() + "\n";
  // One write per line; a failed log write has nowhere to be reported.
  const char* p = line.data();
  size_t left = line.size();
  const int fd = log_fd();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace gvirtus

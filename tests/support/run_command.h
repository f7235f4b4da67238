// Runs a shell command for a test and collects what it prints (stdout; redirect stderr in the
// command to keep it) and its wait status.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

namespace gvirtus::testing {

struct RunResult {
  std::string output;
  int status = -1;  // pclose's wait status; -1 when the command could not be started
};

inline RunResult run(const std::string& command) {
  RunResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  result.status = ::pclose(pipe);
  return result;
}

// A wait status as a shell reports it: the exit code, or 128 + the signal that ended the command;
// -1 when it never ran.
inline int exit_code(int status) {
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs `command` with its stderr merged into what it prints: the output and the exit code.
inline std::pair<std::string, int> run_merged(const std::string& command) {
  RunResult result = run(command + " 2>&1");
  return {std::move(result.output), exit_code(result.status)};
}

}  // namespace gvirtus::testing

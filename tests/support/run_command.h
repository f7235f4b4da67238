// Runs a shell command for a test and collects what it prints (stdout; redirect stderr in the
// command to keep it) and its wait status.
#pragma once

#include <cstdio>
#include <string>

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

}  // namespace gvirtus::testing

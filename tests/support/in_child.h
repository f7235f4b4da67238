// Runs a check in a forked child process, for tests of what another process (or a fork) sees:
// its exit status (0: the check held there, 1: it did not, -1: the child did not exit).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace gvirtus::testing {

inline int in_child(const std::function<bool()>& check) {
  const pid_t child = fork();
  if (child == 0) _exit(check() ? 0 : 1);
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace gvirtus::testing

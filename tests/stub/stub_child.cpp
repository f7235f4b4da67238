#include "stub_child.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

namespace gvirtus::testing {

ChildResult run_with_stub(const std::function<int(void* stub)>& body) {
  const std::string config = ::testing::TempDir() + "/gvirtus-unreachable.json";
  std::ofstream(config) << R"({ "communicator": [ { "endpoint": { "suite": "tcp/ip",
      "protocol": "tcp", "server_address": "127.0.0.1", "port": "1" }, "plugins": [] } ] })";
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    setenv("GVIRTUS_CONFIG", config.c_str(), 1);
    setenv("GVIRTUS_LOGLEVEL", "warning", 1);
    void* stub = dlopen(GVIRTUS_STUB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (stub == nullptr) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      _exit(100);
    }
    _exit(body(stub));
  }
  close(fds[1]);
  ChildResult result;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) result.err.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace gvirtus::testing

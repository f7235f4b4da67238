#include "program_run.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/error.h"

namespace gvirtus::bench {

ProgramRun run_program(const std::vector<std::string>& argv) {
  char err_path[] = "/tmp/gvirtus-bench-run-XXXXXX";
  const int err_fd = ::mkstemp(err_path);
  if (err_fd < 0) raise_errno("mkstemp", errno);
  ::unlink(err_path);
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) raise_errno("pipe2", errno);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::perror(args[0]);
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ProgramRun run;
  char buffer[65536];
  for (ssize_t n; (n = ::read(out_pipe[0], buffer, sizeof buffer)) != 0;) {
    if (n > 0) run.out.append(buffer, static_cast<size_t>(n));
    if (n < 0 && errno != EINTR) break;
  }
  ::close(out_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ::lseek(err_fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(err_fd, buffer, sizeof buffer)) > 0;) run.err.append(buffer, n);
  ::close(err_fd);
  return run;
}

JsonValue workload_result(const ProgramRun& run, const std::string& what) {
  if (run.status != 0) {
    raise(ErrorKind::kFailed, what + " exited with status " + std::to_string(run.status) +
                                  (run.err.empty() ? "" : ": " + run.err));
  }
  return parse_json(run.out, what + " output");
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace gvirtus::bench

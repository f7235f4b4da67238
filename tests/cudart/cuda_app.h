// A CUDA application for the fault tests: programs/copy_loop.cpp through gvirtus-run and the stub
// libcudart.so.13, with its stdin and stdout piped to the test.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace gvirtus::testing {

// A copy_loop process through gvirtus-run, its stdin and stdout piped to the test. Killed (if
// still running) and reaped when the object goes.
class CudaApp {
 public:
  CudaApp(const std::string& config_file, const char* mode) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      const std::string run = std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run";
      ::execl(run.c_str(), run.c_str(), "--config", config_file.c_str(), "--", GVIRTUS_COPY_LOOP,
              mode, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
  }
  ~CudaApp() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      wait();
    }
    if (stdin_ >= 0) ::close(stdin_);
    ::close(stdout_);
  }
  CudaApp(const CudaApp&) = delete;
  CudaApp& operator=(const CudaApp&) = delete;

  pid_t pid() const { return pid_; }
  // The next line it prints, or "" if none comes within `ms` (or it ended first).
  std::string line(int ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
      if (const auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string text = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return text;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "";
      pollfd p{stdout_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[256];
      const ssize_t got = ::read(stdout_, chunk, sizeof chunk);
      if (got <= 0) return "";
      buffer_.append(chunk, static_cast<size_t>(got));
    }
  }
  // Ends its stdin (copy_loop h2h then finishes).
  void end_input() {
    ::close(stdin_);
    stdin_ = -1;
  }
  // Waits for it to end; its wait status.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  std::string buffer_;
};

}  // namespace gvirtus::testing

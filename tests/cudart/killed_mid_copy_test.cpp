// A CUDA application killed in the middle of a large copy: its worker sees the connection end
// inside a message and ends, its session is freed, and an application copying at the same time
// goes on with correct results; a new application is served afterwards. Over tcp and over shm.
//
// The applications are copy_loop (programs/copy_loop.cpp), run through gvirtus-run and the stub
// libcudart.so.13. The backend runs with programs/accepting_device.cpp preloaded, a device that
// accepts every copy: without a GPU the runtime's init failure would make the stub answer the
// copies itself, and no bytes would travel.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;

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

// The one worker in `now` that is not in `before`, or 0.
pid_t new_worker(const std::vector<pid_t>& before, const std::vector<pid_t>& now) {
  pid_t found = 0;
  for (pid_t p : now) {
    if (std::find(before.begin(), before.end(), p) != before.end()) continue;
    if (found != 0) return 0;
    found = p;
  }
  return found;
}

// The lines worker `pid` logged.
std::string lines_of(const std::string& log, pid_t pid) {
  const std::string tag = "[" + std::to_string(pid) + "]";
  std::istringstream in(log);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.find(tag) != std::string::npos) out += line + "\n";
  }
  return out;
}

BackendOptions backend_options(TestTransport transport) {
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.transport = transport;
  options.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_ACCEPTING_DEVICE_PRELOAD};
  if (transport == TestTransport::shm) {
    // No shared arena: a pageable copy then streams through the ring as messages (with an arena
    // it goes through pinned staging blocks there, and only small requests are messages).
    options.endpoint_json = R"({"suite":"shm","protocol":"shm","arena_bytes":0,"path":")" +
                            std::string("/tmp/gvirtus-midcopy-") + std::to_string(::getpid()) +
                            R"(.sock"})";
  }
  return options;
}

class KilledMidCopy : public ::testing::TestWithParam<TestTransport> {};

TEST_P(KilledMidCopy, its_session_is_freed_and_an_application_copying_alongside_goes_on) {
  BackendProcess backend(backend_options(GetParam()));
  const std::string config = backend.client_config_file();
  CudaApp survivor(config, "h2h");
  ASSERT_EQ(survivor.line(60000), "checking") << backend.log();
  ASSERT_TRUE(eventually(5000, [&] { return backend.workers().size() == 1; }));
  const std::vector<pid_t> survivor_only = backend.workers();

  // A kill can land between two messages (the worker then sees a clean close, or fails to send
  // a reply): try again, a little later into the stream each time.
  bool mid_message = false;
  std::string outcomes;
  for (int attempt = 0; attempt < 6 && !mid_message; ++attempt) {
    CudaApp victim(config, "h2d");
    ASSERT_EQ(victim.line(60000), "copying") << backend.log();
    pid_t worker = 0;
    ASSERT_TRUE(eventually(
        5000, [&] { return (worker = new_worker(survivor_only, backend.workers())) != 0; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(40 + 70 * attempt));  // vary the moment
    ::kill(victim.pid(), SIGKILL);
    victim.wait();
    EXPECT_TRUE(eventually(10000, [&] { return !process_exists(worker); })) << backend.log();
    const std::string logged = lines_of(backend.log(), worker);
    mid_message = logged.find("closed the connection mid-message (") != std::string::npos;
    outcomes += logged;
  }
  ASSERT_TRUE(mid_message) << "no kill landed inside a copy's message:\n" << outcomes;

  EXPECT_TRUE(eventually(5000, [&] { return backend.workers() == survivor_only; }))
      << backend.log();
  survivor.end_input();
  const std::string result = survivor.line(60000);
  EXPECT_EQ(result.rfind("copies: ", 0), 0u) << result << "\n" << backend.log();
  const int status = survivor.wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << result;

  CudaApp fresh(config, "h2h");
  ASSERT_EQ(fresh.line(60000), "checking") << backend.log();
  fresh.end_input();
  EXPECT_EQ(fresh.line(60000).rfind("copies: ", 0), 0u);
  const int fresh_status = fresh.wait();
  EXPECT_TRUE(WIFEXITED(fresh_status) && WEXITSTATUS(fresh_status) == 0);
}

INSTANTIATE_TEST_SUITE_P(Transports, KilledMidCopy,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing

// A CUDA application killed in the middle of a large copy: its worker sees the connection end
// inside a message and ends, its session is freed, and an application copying at the same time
// goes on with correct results; a new application is served afterwards. Over tcp and over shm.
//
// The applications are copy_loop (programs/copy_loop.cpp), run through gvirtus-run and the stub
// libcudart.so.13. The backend runs with bench/copy/accepting_device.cpp preloaded, a device that
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

#include "cuda_app.h"
#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;

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

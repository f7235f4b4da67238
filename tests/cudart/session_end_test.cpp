// An application that exits ends its session at once, on both sides, over shm's file mode (the
// ivshmem rendezvous). There no socket closes when a process dies: a side learns that its peer is
// gone from the peer's closed word in the segment, or from a heartbeat that stopped for
// dead_after_ms. The stub says it is done when the process exits, and the worker says so before
// it exits; otherwise the segment stays taken for dead_after_ms after each application.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "cuda_app.h"
#include "support/backend_process.h"
#include "support/text.h"

namespace gvirtus::testing {
namespace {

TEST(FileModeSessions, each_application_that_exits_hands_the_segment_to_the_next_at_once) {
  const std::string file = "/dev/shm/gvirtus-session-end-" + std::to_string(::getpid());
  struct Unlink {
    std::string path;
    ~Unlink() { ::unlink(path.c_str()); }
  } unlink_file{file};
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.transport = TestTransport::shm;
  // The copies reach the backend (see killed_mid_copy_test.cpp), so each session is really used.
  options.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_ACCEPTING_DEVICE_PRELOAD};
  // A minute for a silent peer to count as dead, and clients wait 2 s to connect
  // (client_config_file): a session that ended only by its process dying would keep the next
  // application from connecting at all.
  options.endpoint_json =
      R"({"suite":"shm","protocol":"shm","file":")" + file + R"(","dead_after_ms":60000})";
  BackendProcess backend(options);
  const std::string config = backend.client_config_file();

  for (int i = 0; i < 3; ++i) {
    CudaApp app(config, "h2h");
    ASSERT_EQ(app.line(30000), "checking") << "application " << i << "\n" << backend.log();
    app.end_input();
    EXPECT_EQ(app.line(30000).rfind("copies: ", 0), 0u) << backend.log();
    const int status = app.wait();
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << backend.log();
  }
  const std::string log = backend.log();
  EXPECT_EQ(count_of(log, "session with gvirtus-test-copy-loop"), 3u) << log;
}

}  // namespace
}  // namespace gvirtus::testing

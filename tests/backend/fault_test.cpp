// Faults a shared backend must survive: a client killed in the middle of a large message, a
// backend restarted on the same port, and a network cut between client and backend (a veth pair
// into a network namespace whose link is set down), each with a bounded outcome.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/error.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

Config tcp_config(const std::string& address, uint16_t port, const std::string& extra = "") {
  return parse_config(R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp",)"
                      R"("server_address":")" +
                          address + R"(","port":")" + std::to_string(port) +
                          R"("},"plugins":[]}],"connect_timeout_ms":3000)" +
                          (extra.empty() ? "" : "," + extra) + "}",
                      "<fault test>");
}

TEST(Faults, a_client_killed_mid_large_message_frees_its_session_and_others_go_on) {
  BackendProcess backend;
  Client survivor(backend.client_config(), {});
  ASSERT_TRUE(ping(survivor));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t victim = ::fork();
  if (victim == 0) {
    Client client(backend.client_config(), {});
    pid_t worker = ping(client) ? static_cast<pid_t>(client.backend().worker_pid) : 0;
    (void)!::write(fds[1], &worker, sizeof worker);
    const std::string big(64 << 20, 'L');  // 64 MiB messages, one after the other, until killed
    for (;;) ping(client, big);
  }
  pid_t worker = 0;
  ASSERT_EQ(::read(fds[0], &worker, sizeof worker), static_cast<ssize_t>(sizeof worker));
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_GT(worker, 0);
  std::this_thread::sleep_for(400ms);  // well into the stream of large messages
  ::kill(victim, SIGKILL);
  ::waitpid(victim, nullptr, 0);
  EXPECT_TRUE(eventually(5000, [&] { return !process_exists(worker); })) << backend.log();
  EXPECT_TRUE(eventually(5000, [&] { return backend.workers().size() == 1; }));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(ping(survivor, std::to_string(i)));
  Client fresh(backend.client_config(), {});
  EXPECT_TRUE(ping(fresh, std::string(8 << 20, 'f')));
}

TEST(Faults, after_a_backend_restart_on_the_same_port_new_applications_run) {
  auto first = std::make_unique<BackendProcess>();
  const uint16_t port = first->port();
  Client before(first->client_config(), {});
  ASSERT_TRUE(ping(before));
  first->stop(SIGKILL);
  EXPECT_EQ(error_of([&] { ping(before); }), ErrorKind::kDisconnected);
  first.reset();

  BackendOptions options;
  options.port = port;
  BackendProcess second(options);
  ASSERT_EQ(second.port(), port);
  Client after(second.client_config(), {});
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(ping(after, std::to_string(i)));
  // The application that saw the backend die keeps its error (sticky, like a CUDA device
  // that was lost): a new process is what reconnects.
  EXPECT_EQ(error_of([&] { ping(before); }), ErrorKind::kDisconnected);
}

// A network namespace joined to this one by a veth pair; removed (with the pair) at the end.
class NetnsLink {
 public:
  NetnsLink() {
    const int id = static_cast<int>(::getpid() % 200) + 20;
    ns_ = "gvirtus-t" + std::to_string(::getpid());
    outer_ = "gvo" + std::to_string(::getpid());
    inner_ = "gvi" + std::to_string(::getpid());
    outer_ip_ = "10.213." + std::to_string(id) + ".1";
    inner_ip_ = "10.213." + std::to_string(id) + ".2";
    ok_ = sh("ip netns add " + ns_) &&
          sh("ip link add " + outer_ + " type veth peer name " + inner_) &&
          sh("ip link set " + inner_ + " netns " + ns_) &&
          sh("ip addr add " + outer_ip_ + "/30 dev " + outer_) &&
          sh("ip link set " + outer_ + " up") &&
          sh("ip netns exec " + ns_ + " ip addr add " + inner_ip_ + "/30 dev " + inner_) &&
          sh("ip netns exec " + ns_ + " ip link set " + inner_ + " up") &&
          sh("ip netns exec " + ns_ + " ip link set lo up");
  }
  ~NetnsLink() {
    sh("ip link del " + outer_);
    sh("ip netns del " + ns_);
  }
  bool ok() const { return ok_; }
  void cut() { sh("ip link set " + outer_ + " down"); }
  const std::string& ns() const { return ns_; }
  const std::string& inner_ip() const { return inner_ip_; }

 private:
  static bool sh(const std::string& command) {
    return std::system((command + " > /dev/null 2>&1").c_str()) == 0;
  }
  std::string ns_, outer_, inner_, outer_ip_, inner_ip_;
  bool ok_ = false;
};

TEST(Faults, a_network_cut_fails_calls_within_a_bound_and_frees_the_backend_session) {
  if (::geteuid() != 0 || std::system("command -v ip > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "needs root (CAP_NET_ADMIN) and iproute2's ip to build a network namespace";
  }
  NetnsLink link;
  if (!link.ok())
    GTEST_SKIP() << "ip netns / veth are not available here (a container without "
                    "CAP_NET_ADMIN or CAP_SYS_ADMIN?)";
  BackendOptions options;
  options.address = link.inner_ip();
  options.exec_prefix = {"ip", "netns", "exec", link.ns()};
  BackendProcess backend(options);
  // One application bounds its replies; the other relies on the transport's own detection
  // (keepalive and TCP_USER_TIMEOUT, about 30 s: docs/architecture.md).
  Client bounded(tcp_config(link.inner_ip(), backend.port(), R"("reply_timeout_ms":2000)"), {});
  Client plain(tcp_config(link.inner_ip(), backend.port()), {});
  ASSERT_TRUE(ping(bounded));
  ASSERT_TRUE(ping(plain));
  const auto workers = backend.workers();
  ASSERT_EQ(workers.size(), 2u);

  link.cut();
  const auto start = Clock::now();
  Clock::duration plain_took{};
  ErrorKind plain_error{};
  std::thread other([&] {
    plain_error = error_of([&] { ping(plain); });
    plain_took = Clock::now() - start;
  });
  EXPECT_EQ(error_of([&] { ping(bounded); }), ErrorKind::kTimedOut);
  EXPECT_LT(Clock::now() - start, 6s);
  EXPECT_EQ(error_of([&] { ping(bounded); }), ErrorKind::kTimedOut);  // sticky, immediate
  other.join();
  EXPECT_EQ(plain_error, ErrorKind::kDisconnected);
  EXPECT_LT(plain_took, 45s);
  // On the other side of the cut, keepalive finds the clients gone and the workers end.
  EXPECT_TRUE(eventually(45000, [&] { return backend.workers().empty(); })) << backend.log();
}

size_t fd_count(pid_t pid) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       it != std::filesystem::directory_iterator(); ++it) {
    ++n;
  }
  return n;
}

// The daemon keeps nothing of a session: after hundreds of them (some ended by their clients,
// some by malformed frames) its descriptors are as before and its workers are gone. In the
// sanitized build the daemon's own exit runs LeakSanitizer, so a leak fails the exit status.
TEST(Leaks, hundreds_of_sessions_leave_nothing_behind_in_the_daemon) {
  BackendProcess backend;
  {
    Client warm(backend.client_config(), {});
    ASSERT_TRUE(ping(warm));
  }
  ASSERT_TRUE(eventually(5000, [&] { return backend.workers().empty(); }));
  const size_t fds = fd_count(backend.pid());
  for (int i = 0; i < 300; ++i) {
    Client client(backend.client_config(), {});
    ASSERT_TRUE(ping(client, std::to_string(i)));
    if (i % 3 == 0) {  // a malformed call ends the session from the backend's side
      const uint64_t bad = 0;
      const ByteView piece(reinterpret_cast<const std::byte*>(&bad), sizeof bad);
      EXPECT_NE(error_of([&] {
                  client.call(core::call_id(core::Fn::kWait), std::span(&piece, 1),
                              [](WireReader&) {});
                }),
                static_cast<ErrorKind>(0));
    }
  }
  EXPECT_TRUE(eventually(10000, [&] { return backend.workers().empty(); }));
  EXPECT_EQ(fd_count(backend.pid()), fds);
  const int status = backend.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << backend.log();
}

}  // namespace
}  // namespace gvirtus::testing

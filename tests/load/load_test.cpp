// Load: 64 concurrent clients x 10,000 calls against one backend, over tcp and over shm. Every
// echo must come back intact and in its own session; afterwards no worker process, file
// descriptor or shared-memory segment may be left, in the backend or here. The wall time and call
// rate are printed for the record (docs/testing.md), never asserted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "common/error.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

constexpr int kClients = 64;
constexpr int kCallsPerClient = 10000;

std::set<std::string> dir_entries(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

// Named shared-memory segments that could be ours: the transport suite's own test files (run
// concurrently by ctest, or by other checkouts on this machine) are not.
std::set<std::string> shm_segments() {
  std::set<std::string> names;
  // Other tests' own segments come and go as ctest runs them beside this one.
  for (const std::string& name : dir_entries("/dev/shm")) {
    if (name.rfind("gvirtus-shmtest-", 0) != 0 && name.rfind("gvirtus-test-", 0) != 0) {
      names.insert(name);
    }
  }
  return names;
}

// memfd segments (the shm transport's socket mode) a process still maps.
size_t memfd_mappings(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  size_t count = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/memfd:") != std::string::npos) ++count;
  }
  return count;
}

size_t fd_count(pid_t pid) {
  return dir_entries("/proc/" + std::to_string(pid) + "/fd").size();
}

// Runs the load against `backend` with `client_json` as every client's configuration.
void run_load(BackendProcess& backend, const std::string& client_json, const char* transport) {
  const Config config = parse_config(client_json, "<load client>");
  const size_t own_fds = fd_count(::getpid());
  const size_t backend_fds = fd_count(backend.pid());
  const std::set<std::string> shm_before = shm_segments();

  std::atomic<int64_t> correct{0}, wrong{0}, failed{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::set<uint32_t> worker_pids;
  std::mutex worker_mutex;
  const auto start_threads = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point start;
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      try {
        Client client(config, {});
        client.connect();
        {
          std::lock_guard lock(worker_mutex);
          worker_pids.insert(client.backend().worker_pid);
        }
        ++ready;
        while (!go.load()) std::this_thread::yield();
        char text[32];
        for (int i = 0; i < kCallsPerClient; ++i) {
          const int n = std::snprintf(text, sizeof text, "client %d call %d", c, i);
          const ByteView piece(reinterpret_cast<const std::byte*>(text), static_cast<size_t>(n));
          bool same = false;
          client.call(core::call_id(core::Fn::kPing), std::span(&piece, 1), [&](WireReader& in) {
            const auto echo = in.get_raw(in.remaining());
            same = echo.size() == static_cast<size_t>(n) &&
                   std::memcmp(echo.data(), text, static_cast<size_t>(n)) == 0;
          });
          (same ? correct : wrong)++;
        }
      } catch (const Error& e) {
        ++failed;
        ++ready;
        ADD_FAILURE() << "client " << c << ": " << e.what();
      }
    });
  }
  while (ready.load() < kClients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(backend.workers().size(), static_cast<size_t>(kClients));
  start = std::chrono::steady_clock::now();
  go = true;
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double connect_s = std::chrono::duration<double>(start - start_threads).count();

  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(correct.load(), int64_t{kClients} * kCallsPerClient);
  EXPECT_EQ(worker_pids.size(), static_cast<size_t>(kClients)) << "sessions were shared";
  std::printf(
      "load %s: %d clients x %d calls = %lld correct in %.2f s (%.0f calls/s); "
      "connecting all took %.2f s\n",
      transport, kClients, kCallsPerClient, static_cast<long long>(correct.load()), seconds,
      static_cast<double>(correct.load()) / seconds, connect_s);
  ::testing::Test::RecordProperty("calls_per_second", static_cast<int>(correct.load() / seconds));

  // Nothing left behind: workers, descriptors (here and in the daemon), segments.
  EXPECT_TRUE(eventually(15000, [&] { return backend.workers().empty(); }))
      << backend.workers().size() << " workers left";
  for (const uint32_t pid : worker_pids) {  // exited and reaped by the daemon
    EXPECT_TRUE(eventually(5000, [&] { return !process_exists(static_cast<pid_t>(pid)); }));
  }
  EXPECT_TRUE(eventually(5000, [&] { return fd_count(::getpid()) == own_fds; }))
      << fd_count(::getpid()) << " descriptors here, " << own_fds << " before";
  EXPECT_EQ(fd_count(backend.pid()), backend_fds);
  EXPECT_EQ(shm_segments(), shm_before);
  EXPECT_EQ(memfd_mappings(::getpid()), 0u);
  EXPECT_EQ(memfd_mappings(backend.pid()), 0u);
  EXPECT_EQ(children_of(::getpid()), std::vector<pid_t>{backend.pid()});
  const int status = backend.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << backend.log();
}

TEST(Load, sixty_four_clients_ten_thousand_calls_each_over_tcp) {
  BackendProcess backend(R"("limits":{"max_sessions":100})");
  run_load(backend,
           R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp",)"
           R"("server_address":"127.0.0.1","port":")" +
               std::to_string(backend.port()) + R"("}}],"connect_timeout_ms":10000})",
           "tcp");
}

TEST(Load, sixty_four_clients_ten_thousand_calls_each_over_shm) {
  const std::string endpoint = R"({"suite":"shm","protocol":"shm","path":"@gvirtus-load-)" +
                               std::to_string(::getpid()) + R"("})";
  BackendOptions options;
  options.endpoint_json = endpoint;
  options.extra_json = R"("limits":{"max_sessions":100})";
  BackendProcess backend(options);
  run_load(backend,
           R"({"communicator":[{"endpoint":)" + endpoint + R"(}],"connect_timeout_ms":10000})",
           "shm");
}

}  // namespace
}  // namespace gvirtus::testing

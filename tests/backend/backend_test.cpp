// gvirtus-backend as a process: sessions in separate workers, isolation, clean shutdown, and
// clear errors for clients when something goes wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/error.h"
#include "communicators/tcp/tcp_communicator.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

bool contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

TEST(Backend, two_clients_are_served_by_two_worker_processes_at_once) {
  BackendProcess backend;
  Client a(backend.client_config(), {}), b(backend.client_config(), {});
  ASSERT_TRUE(ping(a));
  ASSERT_TRUE(ping(b));
  const pid_t wa = a.backend().worker_pid, wb = b.backend().worker_pid;
  EXPECT_NE(wa, wb);
  EXPECT_NE(wa, backend.pid());
  EXPECT_THAT(backend.workers(), ::testing::UnorderedElementsAre(wa, wb));
  for (int i = 0; i < 100; ++i) {  // interleaved calls from both stay correct
    ASSERT_TRUE(ping(a, "a" + std::to_string(i)));
    ASSERT_TRUE(ping(b, "b" + std::to_string(i)));
  }
}

TEST(Backend, a_client_killed_with_sigkill_leaves_the_other_undisturbed_and_its_worker_goes) {
  BackendProcess backend;
  Client survivor(backend.client_config(), {});
  ASSERT_TRUE(ping(survivor));

  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t victim = ::fork();
  if (victim == 0) {
    Client client(backend.client_config(), {});
    pid_t worker = 0;
    try {
      if (ping(client)) worker = static_cast<pid_t>(client.backend().worker_pid);
    } catch (...) {
    }
    (void)!::write(pipe_fds[1], &worker, sizeof worker);
    for (;;) ping(client);  // busy until killed
  }
  pid_t victim_worker = 0;
  ASSERT_EQ(::read(pipe_fds[0], &victim_worker, sizeof victim_worker),
            static_cast<ssize_t>(sizeof victim_worker));
  ASSERT_GT(victim_worker, 0);
  EXPECT_TRUE(contains(backend.workers(), victim_worker));
  std::this_thread::sleep_for(50ms);
  ::kill(victim, SIGKILL);
  ::waitpid(victim, nullptr, 0);

  EXPECT_TRUE(eventually(5000, [&] { return !contains(backend.workers(), victim_worker); }))
      << "the killed client's worker is still there";
  EXPECT_TRUE(eventually(5000, [&] { return !process_exists(victim_worker); }));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(ping(survivor, std::to_string(i)));
  EXPECT_EQ(backend.workers().size(), 1u);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(Backend, sigterm_stops_the_daemon_cleanly_with_no_process_left_behind) {
  BackendProcess backend;
  Client a(backend.client_config(), {}), b(backend.client_config(), {});
  ASSERT_TRUE(ping(a) && ping(b));
  const std::vector<pid_t> workers = {static_cast<pid_t>(a.backend().worker_pid),
                                      static_cast<pid_t>(b.backend().worker_pid)};
  const int status = backend.stop(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (pid_t w : workers) EXPECT_FALSE(process_exists(w)) << "worker " << w << " survived";
  // The clients learn that their backend is gone: an error, not a hang.
  EXPECT_EQ(error_of([&] { ping(a); }), ErrorKind::kDisconnected);
  EXPECT_THAT(backend.log(), HasSubstr("stopped"));
}

TEST(Backend, sigint_stops_the_daemon_too) {
  BackendProcess backend;
  const int status = backend.stop(SIGINT);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(Backend, killed_daemon_takes_its_workers_along_and_clients_get_an_error_quickly) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  ASSERT_TRUE(ping(client));
  const pid_t worker = static_cast<pid_t>(client.backend().worker_pid);
  backend.stop(SIGKILL);
  EXPECT_TRUE(eventually(5000, [&] { return !process_exists(worker); }));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { ping(client); }), ErrorKind::kDisconnected);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(error_of([&] { ping(client); }), ErrorKind::kDisconnected);  // sticky, immediate
}

TEST(Backend, unreachable_backend_fails_within_the_connect_bound_and_stays_failed) {
  uint16_t port;
  {
    BackendProcess backend;
    port = backend.port();
  }  // nothing listens there any more
  Config config =
      parse_config(R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp","port":")" +
                       std::to_string(port) + R"("},"plugins":[]}],"connect_timeout_ms":1000})",
                   "<test>");
  Client client(std::move(config), {});
  const auto start = std::chrono::steady_clock::now();
  try {
    ping(client);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected);
    EXPECT_THAT(e.what(), HasSubstr("no gvirtus backend reachable"));
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(port)));
  }
  EXPECT_EQ(error_of([&] { ping(client); }), ErrorKind::kDisconnected);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(Backend, garbage_from_one_client_ends_only_its_session) {
  BackendProcess backend;
  Client good(backend.client_config(), {});
  ASSERT_TRUE(ping(good));
  auto raw = make_tcp_communicator({"127.0.0.1", backend.port()})->connect(2s);
  const std::string junk = "this is not a gvirtus frame at all, just noise....";
  const ByteView piece(reinterpret_cast<const std::byte*>(junk.data()), junk.size());
  raw->send(std::span(&piece, 1));
  EXPECT_EQ(error_of([&] { raw->recv(2s); }), ErrorKind::kDisconnected);  // the worker hung up
  EXPECT_TRUE(eventually(2000, [&] {
    return backend.log().find("wrong magic") != std::string::npos;
  })) << backend.log();
  EXPECT_TRUE(ping(good));
  Client fresh(backend.client_config(), {});
  EXPECT_TRUE(ping(fresh));
}

TEST(Backend, a_silent_connection_does_not_block_other_clients) {
  BackendProcess backend;
  auto silent = make_tcp_communicator({"127.0.0.1", backend.port()})->connect(2s);
  Client client(backend.client_config(), {});
  EXPECT_TRUE(ping(client));
}

TEST(Backend, unknown_plugin_or_mismatched_table_is_refused_with_a_clear_message) {
  BackendProcess backend;
  Client unknown(backend.client_config(), {PluginRef{7, "cublas", 1234}});
  try {
    ping(unknown);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not serve plugin \"cublas\""));
  }
  Client mismatched(backend.client_config(), {PluginRef{0, "core", 99}});
  try {
    ping(mismatched);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("hash mismatch"));
  }
}

TEST(Backend, session_limit_turns_extra_clients_away_as_overloaded) {
  BackendProcess backend(R"("limits":{"max_sessions":1})");
  Client first(backend.client_config(), {});
  ASSERT_TRUE(ping(first));
  Client second(backend.client_config(), {});
  try {
    ping(second);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOverloaded) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("maximum of 1 sessions"));
  }
  EXPECT_TRUE(ping(first));
}

TEST(Backend, unknown_call_is_unimplemented_and_the_session_goes_on) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  EXPECT_EQ(error_of([&] { client.call(make_call_id(0, 999), {}, [](WireReader&) {}); }),
            ErrorKind::kUnimplemented);
  EXPECT_EQ(error_of([&] { client.call(make_call_id(55, 1), {}, [](WireReader&) {}); }),
            ErrorKind::kUnimplemented);
  EXPECT_TRUE(ping(client));
}

TEST(Backend, a_failed_async_call_is_reported_later_and_successful_ones_stay_silent) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  for (int i = 0; i < 1000; ++i) client.send_async(core::call_id(core::Fn::kSink), {});
  EXPECT_TRUE(ping(client));
  EXPECT_FALSE(client.take_async_error().has_value());
  client.send_async(make_call_id(0, 999), {});
  EXPECT_TRUE(ping(client));  // the next synchronous call collects the deferred error
  const auto error = client.take_async_error();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kUnimplemented);
  EXPECT_FALSE(client.take_async_error().has_value());
}

TEST(Backend, many_threads_share_one_session_and_each_gets_its_own_replies) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        if (ping(client, "t" + std::to_string(t) + "-" + std::to_string(i))) ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 8 * 500);
  EXPECT_EQ(backend.workers().size(), 1u);
}

// Pipelined calls (a large copy's chunks): several in flight on one thread, each reply to its
// own call, over both transports; with other threads calling at the same time.
TEST(Backend, pipelined_calls_get_their_own_replies_in_any_finishing_order) {
  for (TestTransport transport : {TestTransport::tcp, TestTransport::shm}) {
    BackendProcess backend("", "[]", transport);
    Client client(backend.client_config(), {});
    std::atomic<bool> stop{false};
    std::atomic<int> other_good{0};
    std::thread other([&] {
      while (!stop) other_good += ping(client, "other") ? 1 : 0;
    });
    auto begin = [&](const std::string& text) {
      const ByteView piece(reinterpret_cast<const std::byte*>(text.data()), text.size());
      return client.begin_call(core::call_id(core::Fn::kPing), std::span(&piece, 1));
    };
    auto finish = [&](Client::PendingCall call) {
      std::string echo;
      client.finish_call(call, [&](WireReader& in) {
        const auto bytes = in.get_raw(in.remaining());
        echo.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      });
      return echo;
    };
    int good = 0;
    for (int i = 0; i < 200; ++i) {
      const std::string big(size_t{1} << (i % 20), static_cast<char>('a' + i % 26));
      auto first = begin("first" + std::to_string(i));
      auto second = begin(big);
      auto third = begin("third" + std::to_string(i));
      // Finished out of order: the replies that arrive first wait for their caller.
      good += finish(third) == "third" + std::to_string(i);
      good += finish(first) == "first" + std::to_string(i);
      good += finish(second) == big;
    }
    stop = true;
    other.join();
    EXPECT_EQ(good, 600) << to_string(transport);
    EXPECT_GT(other_good.load(), 0) << to_string(transport);
  }
}

TEST(Backend, a_blocking_call_of_one_thread_does_not_hold_up_the_others) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  ASSERT_TRUE(ping(client));  // this thread's calls are served on the session's reading thread
  std::atomic<bool> waited{false};
  std::thread blocker([&] {  // a second client thread, on an executor of its own
    const uint32_t ms = 3000;
    const ByteView piece(reinterpret_cast<const std::byte*>(&ms), sizeof ms);
    client.call(core::call_id(core::Fn::kWait), std::span(&piece, 1), [](WireReader&) {});
    waited = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the wait is under way
  // Both the reading thread's client thread and a third one are served during the wait.
  bool pinged = false;
  std::thread third([&] { pinged = ping(client, "third"); });
  third.join();
  EXPECT_TRUE(pinged);
  EXPECT_TRUE(ping(client, "first"));
  EXPECT_FALSE(waited.load()) << "the pings were held up until the 3 s wait ended";
  blocker.join();
  EXPECT_TRUE(waited.load());
}

TEST(Backend, a_malformed_call_on_an_executor_ends_the_session_with_its_reason) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  ASSERT_TRUE(ping(client));
  ErrorKind kind = ErrorKind::kFailed;
  std::thread other([&] {
    const uint64_t too_long = 0;  // Wait takes a u32: 8 bytes are malformed
    const ByteView piece(reinterpret_cast<const std::byte*>(&too_long), sizeof too_long);
    kind = error_of([&] {
      client.call(core::call_id(core::Fn::kWait), std::span(&piece, 1), [](WireReader&) {});
    });
  });
  other.join();
  EXPECT_EQ(kind, ErrorKind::kDisconnected);
  EXPECT_EQ(error_of([&] { ping(client); }), ErrorKind::kDisconnected);
  bool logged = false;  // the worker logs why it ended the session as it ends
  for (int i = 0; i < 100 && !logged; ++i) {
    logged = backend.log().find("unexpected trailing bytes") != std::string::npos;
    if (!logged) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(logged) << "the worker did not log the malformed call: " << backend.log();
}

TEST(Backend, a_forked_child_gets_its_own_session) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  ASSERT_TRUE(ping(client));
  const pid_t child = ::fork();
  if (child == 0) {
    Client own(backend.client_config(), {});
    ::_exit(ping(own) && own.backend().worker_pid != client.backend().worker_pid ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(ping(client));
}

TEST(BackendCli, help_and_bad_arguments_and_a_bad_config_are_clear) {
  const std::string bin = std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-backend";
  EXPECT_EQ(std::system((bin + " --help > /dev/null").c_str()), 0);
  EXPECT_NE(std::system((bin + " --bogus 2> /dev/null").c_str()), 0);
  char dir[] = "/tmp/gvirtus-cli-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string bad = std::string(dir) + "/bad.json";
  const std::string out = std::string(dir) + "/out.txt";
  std::ofstream(bad)
      << R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp","port":true}}]})";
  const int rc = std::system((bin + " --config " + bad + " 2> " + out).c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr(bad));
  EXPECT_THAT(text, HasSubstr("communicator[0].endpoint.port"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gvirtus::testing

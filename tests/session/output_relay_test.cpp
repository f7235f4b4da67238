// What a backend's worker prints while it serves a session (the device's printf above all) reaches
// the application's stdout and stderr, before the synchronous call that brought it returns
// (backend/output_relay.h, protocol/output_frames.h). The probe plugin (probe_calls.h) prints in
// the worker as the CUDA driver would: through stdio left unflushed, or with write(2), in calls
// the client waits for and in calls it sent ahead.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "session/probe_calls.h"
#include "session/probe_client.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

using ::testing::internal::CaptureStderr;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStderr;
using ::testing::internal::GetCapturedStdout;

constexpr uint8_t kStdout = 1, kStderr = 2;

PluginRef probe_ref() {
  return PluginRef{probe::kIdentity.id, std::string(probe::kIdentity.name),
                   probe::kIdentity.table_hash};
}

std::vector<std::byte> request(std::initializer_list<uint8_t> head, const std::string& text) {
  std::vector<std::byte> bytes;
  for (uint8_t b : head) bytes.push_back(static_cast<std::byte>(b));
  for (char c : text) bytes.push_back(static_cast<std::byte>(c));
  return bytes;
}

// Prints `text` in the worker during a call the client waits for: Print, or PrintQuiet, which the
// plugin says prints nothing.
void print(Client& client, uint8_t stream, bool unflushed, const std::string& text,
           probe::Fn fn = probe::Fn::kPrint) {
  const std::vector<std::byte> payload =
      request({stream, unflushed ? uint8_t{1} : uint8_t{0}}, text);
  const ByteView pieces[] = {payload};
  client.call(probe::call_id(fn), pieces, [](WireReader& in) { in.expect_end(); });
}

// Prints `text` in the worker during a call the client sent ahead.
void print_ahead(Client& client, uint8_t stream, const std::string& text) {
  const std::vector<std::byte> payload = request({stream}, text);
  const ByteView pieces[] = {payload};
  client.send_async(probe::call_id(probe::Fn::kPrintAhead), pieces);
}

// A call that prints nothing, which the plugin says of it (BackendPlugin::quiet): a query's.
void quiet(Client& client) {
  client.call(probe::call_id(probe::Fn::kQuiet), {}, [](WireReader& in) { in.expect_end(); });
}

void echo(Client& client) {
  client.call(probe::call_id(probe::Fn::kEcho), {}, [](WireReader& in) { in.expect_end(); });
}

class OutputRelayed : public ::testing::TestWithParam<TestTransport> {
 protected:
  BackendProcess backend_{BackendOptions{.plugins = R"(["probe"])", .transport = GetParam()}};
  Client client_{backend_.client_config(), {probe_ref()}};
};

TEST_P(OutputRelayed, what_a_call_prints_reaches_stdout_before_the_call_returns) {
  echo(client_);  // connected, so that nothing the session's start prints is captured
  CaptureStdout();
  print(client_, kStdout, /*unflushed=*/true, "[device] hello from block 0\n");
  print(client_, kStdout, /*unflushed=*/false, "[device] and from block 1\n");
  EXPECT_EQ(GetCapturedStdout(), "[device] hello from block 0\n[device] and from block 1\n");
}

TEST_P(OutputRelayed, stderr_goes_to_stderr_and_the_workers_log_stays_in_the_backend) {
  echo(client_);
  CaptureStderr();
  print(client_, kStderr, /*unflushed=*/false, "kernel.cu:12: Assertion `i < n` failed.\n");
  // The worker logs at info (BackendProcess): none of its lines may reach the client.
  EXPECT_EQ(GetCapturedStderr(), "kernel.cu:12: Assertion `i < n` failed.\n");
  EXPECT_EQ(backend_.log().find("Assertion"), std::string::npos) << backend_.log();
}

TEST_P(OutputRelayed, output_of_calls_sent_ahead_comes_with_the_next_synchronous_reply) {
  echo(client_);
  CaptureStdout();
  print_ahead(client_, kStdout, "first\n");
  print_ahead(client_, kStdout, "second\n");
  // A core call never runs the device's code: it brings no output.
  EXPECT_TRUE(ping(client_));
  echo(client_);
  EXPECT_EQ(GetCapturedStdout(), "first\nsecond\n");
}

TEST_P(OutputRelayed, more_than_the_pipes_hold_arrives_whole_and_in_order) {
  // 6 MiB in one call: the writer blocks on a full pipe unless the worker reads as it goes, and
  // the relay must split it into several frames.
  std::string text;
  for (int line = 0; text.size() < (size_t{6} << 20); ++line) {
    text += "line " + std::to_string(line) + " of the device's long output\n";
  }
  echo(client_);
  CaptureStdout();
  print(client_, kStdout, /*unflushed=*/false, text);
  const std::string seen = GetCapturedStdout();
  EXPECT_EQ(seen.size(), text.size());
  EXPECT_TRUE(seen == text) << "the relayed output differs from what was printed";
}

TEST_P(OutputRelayed, several_threads_printing_at_once_lose_nothing_and_keep_their_order) {
  // Each client thread has a backend thread of its own: their drains race with each other and
  // with the reader thread, and each thread's lines must still all arrive before its calls
  // return, in its order.
  constexpr int kThreads = 4, kLines = 300;
  echo(client_);
  CaptureStdout();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < kLines; ++i) {
          print(client_, kStdout, /*unflushed=*/i % 2 == 0,
                "thread " + std::to_string(t) + " line " + std::to_string(i) + "\n");
        }
      } catch (const Error&) {
        failures.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::string seen = GetCapturedStdout();
  ASSERT_EQ(failures.load(), 0);
  std::vector<int> next(kThreads, 0);
  std::istringstream lines(seen);
  for (std::string line; std::getline(lines, line);) {
    int t = -1, i = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "thread %d line %d", &t, &i), 2) << line;
    ASSERT_TRUE(t >= 0 && t < kThreads) << line;
    EXPECT_EQ(i, next[t]) << "thread " << t << "'s lines out of order";
    next[t] = i + 1;
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(next[t], kLines) << "thread " << t;
}

// Quiet calls (queries) ask no pipe before their replies (OutputRelay::drain_taken): what they
// relay is what the relay had already taken, and what stdio holds.
TEST_P(OutputRelayed, a_query_relays_what_the_relay_took_since_the_last_reply) {
  echo(client_);
  CaptureStdout();
  print_ahead(client_, kStdout, "printed by a launch\n");
  quiet(client_);  // runs after the call sent ahead: its output is in the pipe, maybe taken
  // The reader thread takes it within this time on any machine that runs the test at all.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  quiet(client_);
  EXPECT_EQ(GetCapturedStdout(), "printed by a launch\n");
}

TEST_P(OutputRelayed, a_query_that_prints_through_stdio_relays_it_before_it_returns) {
  echo(client_);
  CaptureStdout();
  print(client_, kStdout, /*unflushed=*/true, "held in stdio's buffer\n", probe::Fn::kPrintQuiet);
  EXPECT_EQ(GetCapturedStdout(), "held in stdio's buffer\n");
}

TEST_P(OutputRelayed, what_a_query_writes_itself_comes_at_the_latest_with_the_next_reply_in_order) {
  echo(client_);
  CaptureStdout();
  print(client_, kStdout, /*unflushed=*/false, "written by a query\n", probe::Fn::kPrintQuiet);
  print(client_, kStdout, /*unflushed=*/false, "then by a synchronisation\n");
  EXPECT_EQ(GetCapturedStdout(), "written by a query\nthen by a synchronisation\n");
}

TEST_P(OutputRelayed, output_after_the_last_synchronous_reply_is_kept_by_the_backend) {
  echo(client_);
  print_ahead(client_, kStdout, "printed as the application left\n");
  client_.flush_async();
  client_.fail(Error(ErrorKind::kDisconnected, "the test ends the session"));
  EXPECT_TRUE(backend_.logged("printed as the application left")) << backend_.log();
}

TEST_P(OutputRelayed, a_client_that_sends_an_output_frame_ends_only_its_own_session) {
  echo(client_);
  Client other(backend_.client_config(), {probe_ref()});
  EXPECT_EQ(error_of([&] { other.call(core::call_id(core::Fn::kOutput), {}, [](WireReader&) {}); }),
            ErrorKind::kDisconnected);
  EXPECT_TRUE(backend_.logged("a client sent an output frame")) << backend_.log();
  EXPECT_TRUE(ping(client_));
}

INSTANTIATE_TEST_SUITE_P(Transports, OutputRelayed,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(OutputInTheBackend, device_output_backend_keeps_what_workers_print_in_the_backend) {
  BackendProcess backend(
      BackendOptions{.extra_json = R"("device_output":"backend")", .plugins = R"(["probe"])"});
  Client client(backend.client_config(), {probe_ref()});
  echo(client);
  CaptureStdout();
  print(client, kStdout, /*unflushed=*/false, "stays with the backend\n");
  EXPECT_EQ(GetCapturedStdout(), "");
  EXPECT_TRUE(backend.logged("stays with the backend")) << backend.log();
}

}  // namespace
}  // namespace gvirtus::testing

// The core ServeOnExecutors call (protocol/core_calls.h) against a gvirtus-backend process: the
// session serves its first client thread on the reading thread, so that thread's long call holds
// up every other thread's; once a client sends ServeOnExecutors, as its first call or after some,
// every thread's calls run on an executor and another thread's call is answered during the long
// one. A ServeOnExecutors with a payload is malformed: the session ends and the worker says why.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
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

constexpr uint32_t kWaitMs = 1500;  // the long call: a core Wait

void serve_on_executors(Client& client) {
  client.call(core::call_id(core::Fn::kServeOnExecutors), {},
              [](WireReader& reply) { reply.expect_end(); });
}

// Sends a core Wait of `ms` from the calling thread; it is on its way when this returns.
Client::PendingCall begin_wait(Client& client, uint32_t ms) {
  const ByteView piece(reinterpret_cast<const std::byte*>(&ms), sizeof ms);
  return client.begin_call(core::call_id(core::Fn::kWait), std::span(&piece, 1));
}

void finish_wait(Client& client, Client::PendingCall wait) {
  client.finish_call(wait, [](WireReader&) {});
}

// The first thread sends a long Wait, then a second thread pings while it is outstanding. Says
// whether the ping was answered before the Wait returned to the first thread.
bool ping_answered_during_the_wait(Client& client) {
  std::atomic<bool> wait_returned{false};
  bool pinged = false, during_the_wait = false;
  const Client::PendingCall wait = begin_wait(client, kWaitMs);  // sent before the ping
  std::thread other([&] {
    pinged = ping(client, "other");
    during_the_wait = !wait_returned.load();
  });
  finish_wait(client, wait);
  wait_returned = true;
  other.join();
  EXPECT_TRUE(pinged);
  return during_the_wait;
}

TEST(ServeOnExecutors, without_it_the_first_threads_long_call_holds_up_another_threads_ping) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  ASSERT_TRUE(ping(client));  // this thread is served on the session's reading thread
  const Clock::time_point sent = Clock::now();
  const Client::PendingCall wait = begin_wait(client, kWaitMs);
  bool pinged = false;
  Clock::time_point answered;
  std::thread other([&] {  // its ping is read only once the reading thread's Wait is over
    pinged = ping(client, "other");
    answered = Clock::now();
  });
  other.join();
  finish_wait(client, wait);
  EXPECT_TRUE(pinged);
  // A lower bound, so reliable however slow the machine: the Wait began after it was sent.
  EXPECT_GE(answered - sent, std::chrono::milliseconds(kWaitMs))
      << "the ping overtook the first thread's Wait: was it not on the reading thread?";
}

TEST(ServeOnExecutors, sent_first_another_threads_ping_is_answered_during_the_first_threads_wait) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  serve_on_executors(client);  // the session's first call
  EXPECT_TRUE(ping_answered_during_the_wait(client))
      << "the first thread's Wait still held up the reading thread";
  EXPECT_TRUE(ping(client, "after"));
}

TEST(ServeOnExecutors, sent_after_the_thread_was_served_inline_it_moves_that_thread_off) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(ping(client, std::to_string(i)));  // served inline
  serve_on_executors(client);
  EXPECT_TRUE(ping_answered_during_the_wait(client))
      << "the thread served on the reading thread still was after ServeOnExecutors";
  EXPECT_TRUE(ping(client, "after"));
}

TEST(ServeOnExecutors, with_a_payload_it_is_malformed_and_ends_the_session) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  ASSERT_TRUE(ping(client));
  const uint32_t junk = 1;
  const ByteView piece(reinterpret_cast<const std::byte*>(&junk), sizeof junk);
  EXPECT_EQ(error_of([&] {
              client.call(core::call_id(core::Fn::kServeOnExecutors), std::span(&piece, 1),
                          [](WireReader&) {});
            }),
            ErrorKind::kDisconnected);
  EXPECT_EQ(error_of([&] { ping(client); }), ErrorKind::kDisconnected);
  EXPECT_TRUE(backend.logged("ServeOnExecutors: 4 unexpected trailing bytes")) << backend.log();
}

}  // namespace
}  // namespace gvirtus::testing

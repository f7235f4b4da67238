// Batching of asynchronous calls (frontend/async_batch.h) against a real backend: held calls
// keep their order with synchronous ones, a lone call leaves without any later call, and nothing
// held is lost when the client goes. A malformed asynchronous call makes the delivery visible:
// the backend ends the session and logs why.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/error.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

Config batching_config(const BackendProcess& backend, uint32_t window_us) {
  Config config = backend.client_config();
  config.async_batch_us = window_us;
  return config;
}

// core Wait takes a u32: 8 bytes are malformed, and the worker ends the session saying so.
void send_malformed_async(Client& client) {
  const uint64_t too_long = 0;
  const ByteView piece(reinterpret_cast<const std::byte*>(&too_long), sizeof too_long);
  client.send_async(core::call_id(core::Fn::kWait), std::span(&piece, 1));
}

void send_valid_async(Client& client) {
  const uint32_t no_wait = 0;
  const ByteView piece(reinterpret_cast<const std::byte*>(&no_wait), sizeof no_wait);
  client.send_async(core::call_id(core::Fn::kWait), std::span(&piece, 1));
}

bool backend_saw_the_malformed_call(const BackendProcess& backend) {
  return eventually(
      10000, [&] { return backend.log().find("unexpected trailing bytes") != std::string::npos; });
}

class AsyncBatching : public ::testing::TestWithParam<TestTransport> {};

TEST_P(AsyncBatching, held_calls_go_ahead_of_the_next_synchronous_call) {
  BackendProcess backend("", "[]", GetParam());
  Client client(batching_config(backend, 100000), {});  // held up to 0.1 s unless flushed
  ping(client);
  for (int i = 0; i < 10; ++i) send_valid_async(client);
  ping(client);  // the ten went first, and were served
  send_malformed_async(client);
  // Had the ping overtaken the held call, it would be answered; it is not: the session ended.
  try {
    ping(client);
    FAIL() << "a synchronous call overtook an asynchronous one held before it";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
  }
  EXPECT_TRUE(backend_saw_the_malformed_call(backend)) << backend.log();
}

TEST_P(AsyncBatching, a_lone_call_leaves_within_the_window_without_any_later_call) {
  BackendProcess backend("", "[]", GetParam());
  Client client(batching_config(backend, 2000), {});
  ping(client);
  send_malformed_async(client);
  EXPECT_TRUE(backend_saw_the_malformed_call(backend)) << backend.log();
}

TEST_P(AsyncBatching, a_full_batch_leaves_at_once_and_every_call_arrives_in_order) {
  BackendProcess backend("", "[]", GetParam());
  Client client(batching_config(backend, 100000), {});
  ping(client);
  for (int round = 0; round < 50; ++round) {
    for (size_t i = 0; i < 3 * AsyncBatch::kMaxFrames + 7; ++i) send_valid_async(client);
    ping(client);
  }
  send_malformed_async(client);
  EXPECT_THROW(ping(client), Error);
  EXPECT_TRUE(backend_saw_the_malformed_call(backend)) << backend.log();
}

TEST_P(AsyncBatching, a_client_that_goes_sends_what_it_held_first) {
  BackendProcess backend("", "[]", GetParam());
  {
    Client client(batching_config(backend, 100000), {});
    ping(client);
    send_malformed_async(client);
  }  // destroyed at once, well within the window
  EXPECT_TRUE(backend_saw_the_malformed_call(backend)) << backend.log();
}

TEST_P(AsyncBatching, batching_off_sends_each_call_by_itself) {
  BackendProcess backend("", "[]", GetParam());
  Client client(batching_config(backend, 0), {});
  ping(client);
  send_malformed_async(client);
  EXPECT_TRUE(backend_saw_the_malformed_call(backend)) << backend.log();
}

INSTANTIATE_TEST_SUITE_P(Transports, AsyncBatching,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing

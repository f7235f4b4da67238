// The backend's limits (limits.* in properties.json) as a client sees them: bytes in flight per
// session push back on the client instead of piling up in the worker, an idle session is ended
// (but never one waiting for a long call), and a frame over the limit ends only its session.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/error.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

void ping(Client& client, const std::string& text = "ping") {
  const ByteView piece(reinterpret_cast<const std::byte*>(text.data()), text.size());
  std::string echo;
  client.call(core::call_id(core::Fn::kPing), std::span(&piece, 1), [&](WireReader& in) {
    const auto bytes = in.get_raw(in.remaining());
    echo.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  });
  if (echo != text) throw std::runtime_error("wrong echo");
}

void wait_call(Client& client, uint32_t ms, bool async) {
  const ByteView piece(reinterpret_cast<const std::byte*>(&ms), sizeof ms);
  if (async) {
    client.send_async(core::call_id(core::Fn::kWait), std::span(&piece, 1));
  } else {
    client.call(core::call_id(core::Fn::kWait), std::span(&piece, 1), [](WireReader&) {});
  }
}

// A second client thread queues a 2 s wait and 12 KiB of asynchronous calls behind it; then the
// first thread (served on the session's reading thread) pings. Returns how long after the wait
// was sent the ping's answer came.
Clock::duration ping_delay_behind_a_queue(BackendProcess& backend) {
  Client client(backend.client_config(), {});
  ping(client);  // this thread is now the one served on the reading thread
  const auto start = Clock::now();
  std::thread other([&] {
    wait_call(client, 2000, true);
    const std::string blob(3000, 'x');
    const ByteView piece(reinterpret_cast<const std::byte*>(blob.data()), blob.size());
    for (int i = 0; i < 4; ++i)
      client.send_async(core::call_id(core::Fn::kSink), std::span(&piece, 1));
  });
  other.join();
  ping(client, "after the queue");
  const auto delay = Clock::now() - start;
  EXPECT_FALSE(client.take_async_error().has_value());
  return delay;
}

TEST(Limits, bytes_in_flight_push_back_on_the_client_instead_of_piling_up) {
  BackendProcess limited(R"("limits":{"max_inflight_bytes":4096})");
  // The queued bytes exceed 4 KiB until the wait ends: the reading thread stops reading, so the
  // ping behind them in the stream is answered only after the wait.
  EXPECT_GE(ping_delay_behind_a_queue(limited), 1900ms);
  BackendProcess unlimited;  // 1 GiB by default: the ping is read and answered at once
  EXPECT_LT(ping_delay_behind_a_queue(unlimited), 1900ms);
}

TEST(Limits, an_idle_session_is_ended_but_a_long_call_is_not_idleness) {
  BackendProcess backend(R"("limits":{"idle_timeout_s":1})");
  Client busy(backend.client_config(), {});
  ping(busy);
  std::thread waiter([&] { wait_call(busy, 2500, false); });  // an executor busy for 2.5 s
  wait_call(busy, 2500, false);                               // and the reading thread's own call
  waiter.join();
  EXPECT_NO_THROW(ping(busy)) << backend.log();

  Client idle(backend.client_config(), {});
  ping(idle);
  const pid_t worker = static_cast<pid_t>(idle.backend().worker_pid);
  EXPECT_TRUE(eventually(5000, [&] { return !process_exists(worker); })) << backend.log();
  try {
    ping(idle);
    ADD_FAILURE() << "an idle session was not ended";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected);
  }
  EXPECT_THAT(backend.log(), ::testing::HasSubstr("in time"));
}

TEST(Limits, a_frame_over_the_limit_ends_only_its_session) {
  BackendProcess backend(R"("limits":{"max_frame_bytes":65536})");
  Client good(backend.client_config(), {});
  ping(good);
  Client big(backend.client_config(), {});  // its own configuration allows 256 MiB frames
  ping(big);
  try {
    ping(big, std::string(100000, 'b'));
    ADD_FAILURE() << "an oversized frame was served";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
  }
  EXPECT_TRUE(eventually(5000, [&] {
    return backend.log().find("exceeds the limit of 65536") != std::string::npos;
  })) << backend.log();
  ping(good, std::string(60000, 'g'));  // under the limit: served
}

TEST(Defaults, the_backend_listens_on_loopback_unless_told_otherwise) {
  BackendOptions options;
  options.endpoint_json = R"({"suite":"tcp/ip","protocol":"tcp","port":"0"})";
  BackendProcess backend(options);
  EXPECT_THAT(backend.log(), ::testing::HasSubstr("listening on tcp://127.0.0.1:"));
  const Config shipped = load_config(std::string(GVIRTUS_SOURCE_DIR) + "/etc/properties.json");
  EXPECT_EQ(shipped.endpoints.at(0).string_or("server_address", ""), "127.0.0.1");
  EXPECT_FALSE(shipped.secure_application);
}

}  // namespace
}  // namespace gvirtus::testing

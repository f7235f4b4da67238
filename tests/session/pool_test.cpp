// A client's pool (frontend/pool.h): several backends, each a session of its own, calls going to
// the calling thread's route, and a fault confined to the backend it happened on. The probe
// plugin (probe_calls.h) tells which backend served a call: its worker is that daemon's child.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "frontend/frontend_abi.h"
#include "frontend/pool.h"
#include "frontend/process_session.h"
#include "session/probe_calls.h"
#include "session/probe_client.h"
#include "support/backend_process.h"
#include "support/scoped_env.h"

namespace gvirtus::testing {
namespace {

PluginRef probe_ref() {
  return PluginRef{probe::kIdentity.id, std::string(probe::kIdentity.name),
                   probe::kIdentity.table_hash};
}

bool serves(const BackendProcess& backend, uint32_t worker) {
  for (pid_t child : backend.workers()) {
    if (static_cast<uint32_t>(child) == worker) return true;
  }
  return false;
}

// Three probe backends on loopback and a pool over them.
struct ThreeBackends {
  std::vector<std::unique_ptr<BackendProcess>> backends;
  std::vector<const BackendProcess*> views;
  ThreeBackends() {
    for (int i = 0; i < 3; ++i) {
      backends.push_back(std::make_unique<BackendProcess>("", R"(["probe"])"));
      views.push_back(backends.back().get());
    }
  }
  Config config(const std::string& extra_json = "") const {
    return parse_config(pool_config_json(views, extra_json), "<pool>");
  }
};

ErrorKind kind_of_failure(const std::function<void()>& call, std::string* message = nullptr) {
  try {
    call();
  } catch (const Error& e) {
    if (message != nullptr) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "the call succeeded";
  return ErrorKind::kFailed;
}

TEST(Pool, each_backend_is_a_session_of_its_own_reached_through_the_threads_route) {
  ThreeBackends three;
  Pool pool(three.config(), {probe_ref()});
  ASSERT_EQ(pool.size(), 3u);
  EXPECT_EQ(pool.name(2), "backend2");
  EXPECT_EQ(Pool::route(), 0u) << "a thread starts on backend 0";
  for (uint32_t i = 0; i < 3; ++i) {
    pool.set_route(i);
    EXPECT_EQ(Pool::route(), i);
    const uint32_t worker = worker_pid(pool.routed());
    EXPECT_TRUE(serves(*three.backends[i], worker))
        << "route " << i << " reached worker " << worker << ", not a worker of backend " << i;
    EXPECT_EQ(worker_pid(pool.routed()), worker) << "one session per backend, kept";
  }
  std::string message;
  EXPECT_EQ(kind_of_failure([&] { pool.set_route(3); }, &message), ErrorKind::kInvalidInput);
  EXPECT_EQ(message, "no backend 3 in a pool of 3");
  EXPECT_EQ(Pool::route(), 2u) << "a refused route changes nothing";
  pool.set_route(0);
}

TEST(Pool, routes_are_per_thread) {
  ThreeBackends three;
  Pool pool(three.config(), {probe_ref()});
  std::vector<uint32_t> workers(3);
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      pool.set_route(i);
      for (int round = 0; round < 50; ++round) workers[i] = worker_pid(pool.routed());
    });
  }
  for (std::thread& t : threads) t.join();
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(serves(*three.backends[i], workers[i])) << "thread " << i;
  }
  EXPECT_EQ(Pool::route(), 0u) << "other threads' routes are not this one's";
}

TEST(Pool, a_backend_that_dies_fails_only_the_calls_routed_to_it) {
  ThreeBackends three;
  Pool pool(three.config(R"("reply_timeout_ms":3000)"), {probe_ref()});
  std::vector<uint32_t> before(3);
  for (uint32_t i = 0; i < 3; ++i) before[i] = worker_pid(pool.member(i));

  three.backends[1]->stop(SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  std::string first;
  const ErrorKind kind = kind_of_failure([&] { worker_pid(pool.member(1)); }, &first);
  EXPECT_TRUE(kind == ErrorKind::kDisconnected || kind == ErrorKind::kTimedOut) << first;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4))
      << "within the reply timeout";
  std::string again;
  EXPECT_EQ(kind_of_failure([&] { worker_pid(pool.member(1)); }, &again), kind);
  EXPECT_EQ(again, first) << "the failure is sticky, with the same message";

  EXPECT_EQ(worker_pid(pool.member(0)), before[0]) << "backend 0 goes on, in its session";
  EXPECT_EQ(worker_pid(pool.member(2)), before[2]) << "backend 2 goes on, in its session";
}

TEST(Pool, a_backend_that_hangs_fails_its_calls_within_the_reply_timeout_and_only_those) {
  ThreeBackends three;
  Pool pool(three.config(R"("reply_timeout_ms":1000)"), {probe_ref()});
  std::vector<uint32_t> before(3);
  for (uint32_t i = 0; i < 3; ++i) before[i] = worker_pid(pool.member(i));

  ASSERT_EQ(::kill(static_cast<pid_t>(before[2]), SIGSTOP), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(kind_of_failure([&] { worker_pid(pool.member(2)); }), ErrorKind::kTimedOut);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(900));
  EXPECT_LT(waited, std::chrono::seconds(3));
  EXPECT_EQ(worker_pid(pool.member(0)), before[0]);
  EXPECT_EQ(worker_pid(pool.member(1)), before[1]);
  ::kill(static_cast<pid_t>(before[2]), SIGCONT);
}

TEST(Pool, a_backend_that_cannot_be_reached_fails_only_its_calls) {
  ThreeBackends three;
  const uint16_t port = three.backends[0]->port();
  three.backends[0]->stop(SIGKILL);
  Pool pool(three.config(), {probe_ref()});
  std::string message;
  EXPECT_EQ(kind_of_failure([&] { worker_pid(pool.member(0)); }, &message),
            ErrorKind::kDisconnected);
  EXPECT_NE(message.find(std::to_string(port)), std::string::npos)
      << "the message names the endpoint: " << message;
  EXPECT_TRUE(serves(*three.backends[1], worker_pid(pool.member(1))));
  EXPECT_TRUE(serves(*three.backends[2], worker_pid(pool.member(2))));
}

TEST(Pool, a_device_selection_counts_over_the_union_and_reaches_no_backend) {
  ThreeBackends three;
  {
    ScopedEnv selection("GVIRTUS_VISIBLE_DEVICES", " 3, 1");
    Pool pool(three.config(), {probe_ref()});
    EXPECT_EQ(pool.device_selection(), "3,1") << "normalised, for the stubs to apply";
    for (uint32_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(serves(*three.backends[i], worker_pid(pool.member(i))))
          << "backend " << i << " took no selection of its own";
    }
  }
  {
    ScopedEnv selection("GVIRTUS_VISIBLE_DEVICES", "1,x");
    Pool pool(three.config(), {probe_ref()});
    std::string message;
    EXPECT_EQ(kind_of_failure([&] { worker_pid(pool.member(0)); }, &message),
              ErrorKind::kInvalidInput);
    EXPECT_NE(message.find("GVIRTUS_VISIBLE_DEVICES"), std::string::npos) << message;
  }
  Pool one(parse_config(pool_config_json({three.views[0]}), "<one>"), {probe_ref()});
  ScopedEnv selection("GVIRTUS_VISIBLE_DEVICES", "0");
  EXPECT_EQ(one.device_selection(), "") << "one backend applies its selection itself";
}

TEST(Pool, a_configuration_that_names_no_backend_is_one_backend_with_alternatives) {
  BackendProcess backend("", R"(["probe"])");
  // An endpoint nothing listens on first: the one backend is whichever endpoint answers.
  const std::string config = R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp",
      "server_address":"127.0.0.1","port":"1"}},{"endpoint":)" +
                             backend.endpoint_json() + R"(}],"connect_timeout_ms":2000})";
  Pool pool(parse_config(config, "<one>"), {probe_ref()});
  ASSERT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.name(0), "");
  EXPECT_TRUE(serves(backend, worker_pid(pool.routed())));
}

// The C ABI over the process-wide pool of libgvirtus-frontend.so.1, as a stub reaches it (this
// test runs in a process of its own under CTest; the Pool objects above are this program's own).
TEST(Pool, the_frontend_abi_routes_the_process_wide_pool) {
  ThreeBackends three;
  const std::string file = ::testing::TempDir() + "/pool_abi.json";
  std::ofstream(file) << pool_config_json(three.views);
  ScopedEnv config("GVIRTUS_CONFIG", file);
  process_session::open_plugin(probe::kIdentity);  // through the ABI, as a stub opens its own
  ASSERT_EQ(gvirtus_pool_size(), 3u);
  EXPECT_STREQ(gvirtus_pool_backend_name(1), "backend1");
  EXPECT_EQ(gvirtus_pool_backend_name(3), nullptr);
  EXPECT_EQ(gvirtus_route_set(3), static_cast<int>(ErrorKind::kInvalidInput));
  EXPECT_STREQ(gvirtus_error_message(), "no backend 3 in a pool of 3");
  const void* tokens[3];
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(gvirtus_route_set(i), GVIRTUS_OK);
    EXPECT_EQ(gvirtus_route_get(), i);
    tokens[i] = gvirtus_session_token();
    uint32_t worker = 0;
    const auto decode = [](void* context, const void* payload, size_t size) -> int {
      if (size != sizeof(uint32_t)) return static_cast<int>(ErrorKind::kInvalidInput);
      std::memcpy(context, payload, size);
      return GVIRTUS_OK;
    };
    ASSERT_EQ(gvirtus_call(probe::call_id(probe::Fn::kWorkerPid), nullptr, 0, decode, &worker),
              GVIRTUS_OK)
        << gvirtus_error_message();
    EXPECT_TRUE(serves(*three.backends[i], worker)) << "route " << i;
  }
  EXPECT_NE(tokens[0], tokens[1]) << "each backend's session has its own token";
  EXPECT_NE(tokens[1], tokens[2]);
  EXPECT_EQ(gvirtus_flush_async(), GVIRTUS_OK);
}

}  // namespace
}  // namespace gvirtus::testing

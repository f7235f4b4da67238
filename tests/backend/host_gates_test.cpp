// The backend's host gates (backend/services/host_gates.h) with real threads, a reaching thread
// standing in for the CUDA library's callback thread: a reached gate blocks it until the client
// releases its run, next() hands reached gates out in order and times out when none is reached,
// once-gates are freed after their run while persistent ones stay, stray or repeated releases do
// no harm, and close() or a departed client releases every waiting gate.
#include "backend/services/host_gates.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "support/backend_process.h"

namespace gvirtus::services {
namespace {

using namespace std::chrono_literals;
using gvirtus::testing::eventually;

constexpr auto kLongWait = 5000ms;  // next()'s wait where a gate is known to be reached

// A thread that reaches `gate` as the library's callback thread would, and says when it is back.
// Should a test fail with it still blocked, its end closes the gates so that it can be joined.
class Reacher {
 public:
  Reacher(HostGates& gates, Gate* gate, int32_t status = 0) : gates_(gates) {
    thread_ = std::thread([this, gate, status] {
      HostGates::reach(gate, status);
      returned_ = true;
    });
  }
  ~Reacher() {
    if (!returned_) gates_.close();
    thread_.join();
  }
  Reacher(const Reacher&) = delete;
  Reacher& operator=(const Reacher&) = delete;

  bool returned() const { return returned_; }
  // Still blocked after a moment's grace in which a wrongly released thread would come back.
  bool still_blocked() const {
    std::this_thread::sleep_for(50ms);
    return !returned_;
  }
  // Back within `ms` (generous: a loaded machine may be slow to run it).
  bool comes_back(int ms = 5000) const {
    return eventually(ms, [this] { return returned_.load(); });
  }

 private:
  HostGates& gates_;
  std::atomic<bool> returned_{false};
  std::thread thread_;
};

TEST(HostGates, a_reached_gate_blocks_its_thread_until_the_client_releases_the_run) {
  HostGates gates;
  gates.open(nullptr);
  Gate* gate = gates.make(7, true);
  ASSERT_NE(gate, nullptr);
  Reacher reacher(gates, gate, 3);
  const std::optional<ReachedGate> reached = gates.next(0, kLongWait);
  ASSERT_TRUE(reached.has_value());
  EXPECT_NE(reached->run, 0u);
  EXPECT_EQ(reached->token, 7u);
  EXPECT_EQ(reached->status, 3);
  EXPECT_TRUE(reached->once);
  EXPECT_TRUE(reacher.still_blocked()) << "the gate returned before the client released it";
  EXPECT_FALSE(gates.next(reached->run, 20ms).has_value());  // releases it; nothing else reached
  EXPECT_TRUE(reacher.comes_back()) << "the released gate still blocks";
}

TEST(HostGates, next_with_no_gate_reached_returns_nothing_after_its_wait) {
  HostGates gates;
  gates.open(nullptr);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(gates.next(0, 20ms).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
}

TEST(HostGates, a_once_gate_is_gone_after_its_run_and_a_persistent_one_stays) {
  HostGates gates;
  gates.open(nullptr);
  Gate* once = gates.make(5, true);
  Gate* persistent = gates.make(6, false);
  ASSERT_NE(once, nullptr);
  ASSERT_NE(persistent, nullptr);
  EXPECT_EQ(gates.token_of(once), 5u);
  EXPECT_EQ(gates.token_of(persistent), 6u);
  {
    Reacher reacher(gates, once);
    const auto reached = gates.next(0, kLongWait);
    ASSERT_TRUE(reached.has_value());
    EXPECT_TRUE(reached->once);
    gates.next(reached->run, 0ms);
    ASSERT_TRUE(reacher.comes_back());
  }
  EXPECT_EQ(gates.token_of(once), 0u) << "a once-gate outlived its run";
  for (int i = 0; i < 2; ++i) {  // a graph's host node runs any number of times
    Reacher reacher(gates, persistent);
    const auto reached = gates.next(0, kLongWait);
    ASSERT_TRUE(reached.has_value());
    EXPECT_EQ(reached->token, 6u);
    EXPECT_FALSE(reached->once);
    gates.next(reached->run, 0ms);
    ASSERT_TRUE(reacher.comes_back());
    EXPECT_EQ(gates.token_of(persistent), 6u) << "a persistent gate was freed after run " << i;
  }
}

TEST(HostGates, a_discarded_gate_is_forgotten_and_no_other_pointer_is_a_gate) {
  HostGates gates;
  gates.open(nullptr);
  Gate* refused = gates.make(8, true);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(gates.token_of(refused), 8u);
  gates.discard(refused);
  EXPECT_EQ(gates.token_of(refused), 0u);

  const Gate lookalike{&gates, 9, false};  // a gate's shape, but not one the gates made
  int other = 0;
  EXPECT_EQ(gates.token_of(&lookalike), 0u);
  EXPECT_EQ(gates.token_of(&other), 0u);
  EXPECT_EQ(gates.token_of(nullptr), 0u);
}

TEST(HostGates, a_gate_for_token_zero_is_refused) {
  HostGates gates;
  gates.open(nullptr);
  EXPECT_EQ(gates.make(0, true), nullptr);
  EXPECT_EQ(gates.make(0, false), nullptr);
}

TEST(HostGates, releasing_an_unknown_run_or_a_run_twice_releases_no_other_gate) {
  HostGates gates;
  gates.open(nullptr);
  EXPECT_FALSE(gates.next(12345, 20ms).has_value());  // unknown: ignored

  Gate* gate = gates.make(11, false);
  ASSERT_NE(gate, nullptr);
  uint64_t first_run = 0;
  {
    Reacher reacher(gates, gate);
    const auto reached = gates.next(0, kLongWait);
    ASSERT_TRUE(reached.has_value());
    first_run = reached->run;
    gates.next(first_run, 0ms);
    ASSERT_TRUE(reacher.comes_back());
  }
  EXPECT_FALSE(gates.next(first_run, 20ms).has_value());  // released twice: ignored

  // A later run of the gate still waits for its own release, whatever else is released.
  Reacher reacher(gates, gate);
  const auto reached = gates.next(first_run, kLongWait);  // the old run, a third time
  ASSERT_TRUE(reached.has_value());
  EXPECT_NE(reached->run, first_run);
  EXPECT_TRUE(reacher.still_blocked()) << "releasing an old run released the new one";
  gates.next(12345, 0ms);
  EXPECT_TRUE(reacher.still_blocked()) << "releasing an unknown run released a gate";
  gates.next(reached->run, 0ms);
  EXPECT_TRUE(reacher.comes_back());
}

TEST(HostGates, close_releases_a_waiting_gate_and_later_ones_until_open_serves_again) {
  HostGates gates;
  gates.open(nullptr);
  Gate* waiting = gates.make(21, true);
  Gate* later = gates.make(22, true);
  Gate* after_open = gates.make(23, true);
  ASSERT_TRUE(waiting && later && after_open);
  {
    Reacher reacher(gates, waiting);
    ASSERT_TRUE(gates.next(0, kLongWait).has_value());
    ASSERT_TRUE(reacher.still_blocked());
    gates.close();
    EXPECT_TRUE(reacher.comes_back()) << "close() left a gate waiting";
  }
  {
    Reacher reacher(gates, later);  // nobody releases it: it must not wait
    EXPECT_TRUE(reacher.comes_back()) << "a gate reached after close() waited";
  }
  EXPECT_EQ(gates.token_of(later), 0u) << "a once-gate reached after close() was kept";
  EXPECT_FALSE(gates.next(0, 20ms).has_value()) << "a gate reached after close() was queued";

  gates.open(nullptr);
  Reacher reacher(gates, after_open);
  const auto reached = gates.next(0, kLongWait);
  ASSERT_TRUE(reached.has_value());
  EXPECT_EQ(reached->token, 23u);
  EXPECT_TRUE(reacher.still_blocked()) << "a gate after open() did not wait for its release";
  gates.next(reached->run, 0ms);
  EXPECT_TRUE(reacher.comes_back());
}

TEST(HostGates, a_departed_client_releases_a_waiting_gate_and_next_returns_at_once) {
  HostGates gates;
  std::atomic<int> client_gone{0};
  gates.open(&client_gone);
  Gate* waiting = gates.make(31, true);
  Gate* later = gates.make(32, true);
  ASSERT_TRUE(waiting && later);
  Reacher reacher(gates, waiting);
  ASSERT_TRUE(gates.next(0, kLongWait).has_value());
  ASSERT_TRUE(reacher.still_blocked());
  client_gone = 1;  // nothing wakes the gate: it looks every 0.1 s
  EXPECT_TRUE(reacher.comes_back(2000)) << "the gate outwaited its departed client";

  Reacher after(gates, later);
  EXPECT_TRUE(after.comes_back()) << "a gate reached after the client went waited";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(gates.next(0, 30000ms).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "next() waited for a departed client";
}

TEST(HostGates, gates_reached_from_two_threads_are_handed_out_in_order_and_released_apart) {
  HostGates gates;
  gates.open(nullptr);
  Gate* a = gates.make(41, true);
  Gate* b = gates.make(42, true);
  ASSERT_TRUE(a && b);
  std::map<uint64_t, std::unique_ptr<Reacher>> by_token;
  by_token[41] = std::make_unique<Reacher>(gates, a);
  by_token[42] = std::make_unique<Reacher>(gates, b);
  // Most likely both are queued by now, so the order below is the queue's, not the threads'
  // (though it holds whenever next() comes).
  std::this_thread::sleep_for(100ms);
  const auto first = gates.next(0, kLongWait);
  const auto second = gates.next(0, kLongWait);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(second.has_value());
  EXPECT_LT(first->run, second->run) << "runs were not handed out in the order they were reached";
  EXPECT_NE(first->token, second->token);
  ASSERT_TRUE(by_token.count(first->token) && by_token.count(second->token));
  Reacher& first_reacher = *by_token[first->token];
  Reacher& second_reacher = *by_token[second->token];
  EXPECT_TRUE(first_reacher.still_blocked());
  EXPECT_TRUE(second_reacher.still_blocked());

  gates.next(second->run, 0ms);  // the later one first: each waits for its own release
  EXPECT_TRUE(second_reacher.comes_back());
  EXPECT_TRUE(first_reacher.still_blocked()) << "releasing one run released the other";
  gates.next(first->run, 0ms);
  EXPECT_TRUE(first_reacher.comes_back());
}

}  // namespace
}  // namespace gvirtus::services

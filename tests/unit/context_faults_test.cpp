// frontend/context_faults.h: sticky statuses, and a child forked after the library's
// initialization (ForkedChild) refused as the native library refuses it, with real fork()s.
#include "frontend/context_faults.h"
#include "support/in_child.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

namespace gvirtus::stub {
namespace {

constexpr int32_t kSuccess = 0;
constexpr int32_t kNotInitialized = 3;
constexpr uint16_t kInit = 1, kVersion = 2, kAlloc = 3, kReset = 4;
constexpr int32_t kSticky[] = {700};
constexpr uint16_t kClearing[] = {kReset};
constexpr uint16_t kContextFree[] = {kInit, kVersion};
constexpr uint16_t kAnswered[] = {kVersion};
constexpr ForkedChild kForked{kInit, kNotInitialized, kAnswered};
constexpr ContextFaults kFaults{kSticky, 46, kClearing, kContextFree, &kForked};

using testing::in_child;

TEST(ContextFaults, a_sticky_status_holds_until_a_clearing_call_succeeds) {
  ContextFaultState state(kFaults, kSuccess);
  state.follow(kAlloc, 700);
  EXPECT_EQ(state.sticky(), 700);
  state.follow(kAlloc, kSuccess);
  EXPECT_EQ(state.sticky(), 700);
  state.follow(kReset, kSuccess);
  EXPECT_FALSE(state.has_sticky());
}

TEST(ContextFaults, a_child_forked_after_init_is_refused_but_for_the_answered_calls) {
  ContextFaultState state(kFaults, kSuccess);
  state.follow(kInit, kSuccess);
  EXPECT_FALSE(state.forked_refusal(kAlloc)) << "the initializing process itself goes on";
  EXPECT_EQ(state.forked_child_status(), kSuccess);
  EXPECT_EQ(in_child([&] {
              return state.forked_refusal(kAlloc) == kNotInitialized &&
                     state.forked_refusal(kInit) == kNotInitialized &&
                     !state.forked_refusal(kVersion) &&
                     state.forked_child_status() == kNotInitialized &&
                     // A grandchild is refused too.
                     in_child([&] { return state.forked_refusal(kAlloc) == kNotInitialized; }) == 0;
            }),
            0);
  EXPECT_FALSE(state.forked_refusal(kAlloc)) << "the parent is never marked";
}

TEST(ContextFaults, a_child_forked_before_init_or_after_a_failed_one_starts_afresh) {
  ContextFaultState state(kFaults, kSuccess);
  state.follow(kInit, kNotInitialized);  // a failed initialization initializes nothing
  EXPECT_EQ(in_child([&] {
              if (state.forked_refusal(kAlloc) || state.forked_child_status() != kSuccess) {
                return false;
              }
              state.follow(kInit, kSuccess);  // the child's own initialization
              return !state.forked_refusal(kAlloc) &&
                     in_child([&] { return state.forked_refusal(kAlloc) == kNotInitialized; }) == 0;
            }),
            0);
}

TEST(ContextFaults, without_a_forked_child_rule_a_child_carries_on) {
  constexpr ContextFaults kNoRule{kSticky, 46, kClearing, kContextFree};
  ContextFaultState state(kNoRule, kSuccess);
  state.follow(kInit, kSuccess);
  EXPECT_EQ(in_child([&] {
              return !state.forked_refusal(kAlloc) && state.forked_child_status() == kSuccess;
            }),
            0);
}

TEST(ContextFaults, a_destroyed_state_is_no_longer_marked_at_fork) {
  // Destroyed states leave their slot: many come and go, and later ones are still followed.
  for (int i = 0; i < 20; ++i) {
    ContextFaultState gone(kFaults, kSuccess);
    gone.follow(kInit, kSuccess);
  }
  ContextFaultState state(kFaults, kSuccess);
  state.follow(kInit, kSuccess);
  EXPECT_EQ(in_child([&] { return state.forked_refusal(kAlloc) == kNotInitialized; }), 0);
}

}  // namespace
}  // namespace gvirtus::stub

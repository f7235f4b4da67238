// The shm connection's learned spin (spin_budget.h): how long a wait spins before it sleeps.
#include "communicators/shm/spin_budget.h"

#include <gtest/gtest.h>

namespace gvirtus::shm {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

TEST(SpinBudget, spins_the_whole_maximum_while_answers_come_within_it) {
  SpinBudget b(microseconds(50));
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(b.next(), microseconds(50));
    b.answered_while_spinning(microseconds(i % 40));
  }
  EXPECT_EQ(b.budget(), microseconds(50));
}

TEST(SpinBudget, halves_on_each_spin_in_vain_down_to_the_floor) {
  SpinBudget b(microseconds(64));
  b.spun_in_vain();
  EXPECT_EQ(b.budget(), microseconds(32));
  b.spun_in_vain();
  EXPECT_EQ(b.budget(), microseconds(16));
  for (int i = 0; i < 20; ++i) b.spun_in_vain();
  EXPECT_EQ(b.budget(), SpinBudget::kFloor);
}

TEST(SpinBudget, an_answer_while_spinning_raises_the_budget_to_four_times_its_wait) {
  SpinBudget b(microseconds(200));
  for (int i = 0; i < 20; ++i) b.spun_in_vain();
  ASSERT_EQ(b.budget(), SpinBudget::kFloor);
  b.answered_while_spinning(microseconds(10));
  EXPECT_EQ(b.budget(), microseconds(40));
  b.answered_while_spinning(microseconds(2));  // a quicker answer never shortens the spin
  EXPECT_EQ(b.budget(), microseconds(40));
  b.answered_while_spinning(microseconds(150));  // capped at the configured spin
  EXPECT_EQ(b.budget(), microseconds(200));
}

TEST(SpinBudget, a_shortened_budget_probes_the_whole_maximum_every_thirty_second_wait) {
  SpinBudget b(microseconds(100));
  for (int i = 0; i < 20; ++i) b.spun_in_vain();
  int probes = 0;
  for (uint32_t i = 1; i <= 10 * SpinBudget::kProbeEvery; ++i) {
    const nanoseconds spin = b.next();
    if (spin == microseconds(100)) {
      ++probes;
      EXPECT_EQ(i % SpinBudget::kProbeEvery, 0u) << "wait " << i;
    } else {
      EXPECT_EQ(spin, SpinBudget::kFloor);
    }
    b.spun_in_vain();  // the peer stays slow: probes fail and change nothing
  }
  EXPECT_EQ(probes, 10);
  // A probe that is answered gives the spin back to every wait after it.
  while (b.next() != microseconds(100)) b.spun_in_vain();
  b.answered_while_spinning(microseconds(30));
  for (uint32_t i = 0; i < 2 * SpinBudget::kProbeEvery; ++i) EXPECT_EQ(b.next(), microseconds(100));
}

TEST(SpinBudget, long_sleeps_stop_the_floor_spin_and_the_probes_until_sleeps_are_short_again) {
  SpinBudget b(microseconds(50));
  for (int i = 0; i < 20; ++i) b.spun_in_vain();
  // An oversubscribed machine: every wait sleeps for hundreds of microseconds.
  for (int i = 0; i < 16; ++i) b.slept(microseconds(400));
  ASSERT_TRUE(b.spin_seldom_pays());
  for (uint32_t i = 0; i < 4 * SpinBudget::kProbeEvery; ++i) {
    EXPECT_EQ(b.next(), nanoseconds(0)) << "wait " << i;
    b.spun_in_vain();
    b.slept(microseconds(300 + i % 200));
  }
  EXPECT_EQ(b.budget(), SpinBudget::kFloor) << "the budget itself is unchanged";
  // The peer is fast again: a doorbell wakes each sleep within microseconds.
  int waits = 0;
  while (b.next() == nanoseconds(0)) {
    b.slept(microseconds(15));
    ASSERT_LT(++waits, 10) << "short sleeps bring the spin back within a few waits";
  }
  bool probed = false;
  for (uint32_t i = 0; i < SpinBudget::kProbeEvery; ++i) probed |= b.next() == microseconds(50);
  EXPECT_TRUE(probed);
}

TEST(SpinBudget, while_spinning_seldom_pays_even_a_whole_budget_spins_not) {
  // An oversubscribed machine where a pair of sides sometimes runs on two cores at once: one wait
  // in eight is answered while spinning, which keeps the budget whole, but each spin holds a core.
  SpinBudget b(microseconds(50));
  for (int i = 1; i <= 64; ++i) {
    if (i % 8 == 0) {
      b.answered_while_spinning(microseconds(20));
    } else {
      b.spun_in_vain();
      b.slept(microseconds(500));
    }
  }
  ASSERT_EQ(b.budget(), microseconds(50));
  EXPECT_EQ(b.next(), nanoseconds(0));
  // File mode (floor at the maximum: sleeps are timed) keeps its whole spin whatever they last.
  SpinBudget file(microseconds(50), microseconds(50));
  for (int i = 0; i < 16; ++i) file.slept(microseconds(500));
  EXPECT_EQ(file.next(), microseconds(50));
}

TEST(SpinBudget, spins_that_mostly_pay_go_on_through_rare_long_sleeps) {
  // A CPU-bound process beside the peer preempts it now and then for a whole time slice: that
  // wait sleeps for milliseconds, but most are answered while spinning. Stopping the spin there
  // would hand the core to that process and make every wait a long sleep.
  SpinBudget b(microseconds(50));
  for (int i = 1; i <= 160; ++i) {
    if (i % 16 == 0) {
      b.spun_in_vain();
      b.slept(milliseconds(3));
    } else {
      b.answered_while_spinning(microseconds(1));
    }
    EXPECT_GT(b.next(), nanoseconds(0)) << "wait " << i;
  }
}

TEST(SpinBudget, a_floor_at_the_maximum_keeps_the_whole_spin) {
  // File mode: no doorbell, a sleep lasts at least 50 us, so spinning less would only add latency.
  SpinBudget b(microseconds(50), microseconds(50));
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(b.next(), microseconds(50));
    b.spun_in_vain();
  }
  EXPECT_EQ(b.budget(), microseconds(50));
}

TEST(SpinBudget, a_spin_configured_below_the_floor_or_zero_stays_there) {
  SpinBudget zero(nanoseconds(0));
  zero.spun_in_vain();
  zero.answered_while_spinning(microseconds(5));
  EXPECT_EQ(zero.next(), nanoseconds(0));
  SpinBudget tiny(nanoseconds(300));
  tiny.spun_in_vain();
  EXPECT_EQ(tiny.budget(), nanoseconds(300));
  EXPECT_EQ(tiny.next(), nanoseconds(300));
}

}  // namespace
}  // namespace gvirtus::shm

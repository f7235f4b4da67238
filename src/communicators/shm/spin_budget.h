// How long a waiting shm side spins before it sleeps, learned per connection.
//
// Spinning pays only while the peer is running: an answer that comes within the spin costs no
// system call on either side. It costs dearly when the peer is not running. Either the peer is
// busy for long (a GPU synchronisation), or it is runnable but waits for a core that spinners
// hold. With 64 shm sessions on 2 cores, a fixed 200 us spin made the load test 25 times slower
// than no spin at all. So the connection spins for a budget, not for the whole configured
// `spin_us`:
//   - a spin that ran out halves the budget (down to a floor: kFloor where a sleeper is woken at
//     once, the whole maximum where sleeps are timed and so cost far more than a spin);
//   - an answer seen while spinning, after `e`, raises the budget to at least 4e (up to the
//     maximum), so waits of that length keep being spun through;
//   - every kProbeEvery-th wait spins for the whole maximum while the budget is below it, so a
//     connection whose peer became fast again finds out;
//   - but while most waits sleep (fewer than a quarter answered while spinning, a running
//     share) and the waits that slept lasted long on average (over kLongSleeps times the
//     maximum: a whole spin could not have caught their answers), a wait spins not at all, and
//     probes not. That is the oversubscribed machine (64 sessions on 2 cores: a wait lasts
//     hundreds of microseconds), where the floor and the probes were a fifth of all CPU time, and
//     where the spins that did catch an answer (a pair that happened to run on both cores) kept
//     the whole spin and held cores that the other sessions needed. A peer that became fast
//     again shows as short sleeps (a doorbell wakes the sleeper within microseconds), which
//     brings the spin back within a few waits. Both conditions, because long sleeps alone also
//     come from a peer that a CPU-bound process beside it preempts now and then: there most
//     spins still pay, and a side that stopped spinning would give its core to that process and
//     sleep long on every wait (a single call took 10 us instead of 1). Only where a sleeper is
//     woken at once (floor below the maximum): file mode's timed sleeps make every spin worth
//     its while.
// Unloaded, answers come within the spin and the budget stays at the maximum: the same latency as
// a fixed spin. The policy is pure bookkeeping (no clock, no atomics); ShmConnection times the
// waits. Not thread-safe: each of a connection's waiting directions keeps its own.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace gvirtus::shm {

class SpinBudget {
 public:
  static constexpr std::chrono::nanoseconds kFloor{1000};
  static constexpr uint32_t kProbeEvery = 32;
  static constexpr int kLongSleeps = 4;
  // The share of waits answered while spinning, in 256ths, below which spinning seldom pays.
  static constexpr uint32_t kPaidSeldom = 64;

  explicit SpinBudget(std::chrono::nanoseconds maximum, std::chrono::nanoseconds floor = kFloor)
      : maximum_(std::max(maximum, std::chrono::nanoseconds(0))),
        floor_(std::clamp(floor, std::chrono::nanoseconds(0), maximum_)),
        budget_(maximum_) {}

  // How long the next wait may spin.
  std::chrono::nanoseconds next() {
    if (floor_ < maximum_ && spin_seldom_pays()) return std::chrono::nanoseconds(0);
    if (budget_ == maximum_) return budget_;
    if (++waits_below_ % kProbeEvery == 0) return maximum_;
    return budget_;
  }

  // The wait's condition held after `waited` of spinning.
  void answered_while_spinning(std::chrono::nanoseconds waited) {
    paid_ += (256 - paid_) / 8;
    budget_ = std::clamp(4 * waited, budget_, maximum_);
    if (budget_ == maximum_) waits_below_ = 0;
  }

  // The wait spun for its whole spin, then slept.
  void spun_in_vain() { budget_ = std::max(budget_ / 2, floor_); }

  // The wait slept, and ended `waited` after it began (spin and sleeps). A running average, a
  // quarter for the newest.
  void slept(std::chrono::nanoseconds waited) {
    paid_ -= paid_ / 8;
    sleep_average_ += (waited - sleep_average_) / 4;
  }

  // Whether most waits sleep, and sleep so long that spinning could not have answered them.
  bool spin_seldom_pays() const {
    return paid_ < kPaidSeldom && sleep_average_ > kLongSleeps * maximum_;
  }

  std::chrono::nanoseconds budget() const { return budget_; }
  std::chrono::nanoseconds maximum() const { return maximum_; }

 private:
  const std::chrono::nanoseconds maximum_;
  const std::chrono::nanoseconds floor_;
  std::chrono::nanoseconds budget_;
  std::chrono::nanoseconds sleep_average_{0};
  uint32_t paid_ = 256;  // share of waits answered while spinning, in 256ths (a running average)
  uint32_t waits_below_ = 0;
};

}  // namespace gvirtus::shm

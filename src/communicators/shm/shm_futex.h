// Futex doorbells on words of the shared segment: a side about to sleep waits on its own
// `*_waiting` word (shm_layout.h), the other side clears that word and wakes it. One system call
// to sleep and one to wake, nothing at all while neither side sleeps.
//
// The futexes are shared ones (no FUTEX_PRIVATE_FLAG): the segment is mapped by two processes,
// and the kernel keys such a futex by the page it lies in, so both sides name the same one.
// The peer can write the word at any time; the worst it can do is wake us early or make a sleep
// last its whole timeout, both of which the callers allow.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace gvirtus::shm {

enum class FutexWait {
  kWoken,        // woken, interrupted, or the word no longer held the expected value
  kTimedOut,     // `timeout` passed
  kUnsupported,  // the kernel cannot wait on this mapping (an ivshmem BAR in a guest): sleep
                 // instead
};

// Sleeps while `word` holds `expected`, for at most `timeout` (measured on CLOCK_MONOTONIC).
// Returns at once when the word differs. Blocks the calling thread.
FutexWait futex_wait(std::atomic<uint32_t>& word, uint32_t expected,
                     std::chrono::nanoseconds timeout);

// Wakes every thread sleeping on `word` (in any process mapping it). Never blocks. False when
// the kernel cannot wake on this mapping (see kUnsupported).
bool futex_wake(std::atomic<uint32_t>& word);

// The doorbell: if a sleeper declared itself in `waiting` (set it to 1), clears the word and
// wakes it. Clearing first is what makes a wake-up that comes before the sleeper's futex_wait
// count: that wait then finds 0, not 1, and returns at once. Costs no system call when nobody
// sleeps. False as futex_wake.
inline bool wake_sleeper(std::atomic<uint32_t>& waiting) {
  if (waiting.load(std::memory_order_relaxed) != 0 &&
      waiting.exchange(0, std::memory_order_seq_cst) != 0) {
    return futex_wake(waiting);
  }
  return true;
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "a futex is a plain 32-bit word: the atomic must be one");

}  // namespace gvirtus::shm

// What a stub knows of its library's context from the replies it read, so that calls it sends
// ahead answer what the library would answer at once, as a local library knows its context's
// state (both were seen missing on an H200):
//  - a sticky status (a kernel fault): every call fails with it until a clearing call (a context
//    reset) succeeds; calls sent ahead return it without a round trip.
//  - the unavailable status (the device cannot be had): the library tries again at every call,
//    so calls sent ahead are sent and waited for (the reply is the library's answer) until a call
//    that needs a context succeeds.
// ContextFaults says which statuses and functions are which (a generated library's descriptor:
// context_faults; the cudart stub's own table). One state for the process: a fault in one of
// several contexts makes calls sent ahead to the others wait for their replies or fail too (rare;
// correct for the one-context case). Thread-safe: relaxed atomics, read on every call sent ahead.
//
// A child forked after its parent initialized the library (ForkedChild): a native driver refuses
// every call there but a few (seen: cuInit and cuDeviceGetCount answer CUDA_ERROR_NOT_INITIALIZED
// in such a child, and programs probe for it to choose between fork and spawn). The stub answers
// the same, without a session: the child never reaches a backend through this library, so the
// parent's session and device state are untouched. A child forked before the library was
// initialized starts afresh in a session of its own.
#pragma once

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>

namespace gvirtus::stub {

struct ForkedChild {
  uint16_t init;                       // the function whose success initializes the library
  int32_t status;                      // what every other call answers in a child forked after it
  std::span<const uint16_t> answered;  // functions that still answer in such a child
};

struct ContextFaults {
  std::span<const int32_t> sticky;
  int32_t unavailable;
  std::span<const uint16_t> clearing;         // functions whose success clears a sticky status
  std::span<const uint16_t> context_free;     // functions that succeed without a context
  const ForkedChild* forked_child = nullptr;  // none: a child carries on as its parent
};

class ContextFaultState {
 public:
  constexpr ContextFaultState(const ContextFaults& faults, int32_t success)
      : faults_(faults), success_(success), sticky_(success) {}
  ~ContextFaultState() {
    if (faults_.forked_child != nullptr) stop_following_forks(this);
  }
  ContextFaultState(const ContextFaultState&) = delete;
  ContextFaultState& operator=(const ContextFaultState&) = delete;

  // What the reply of `function` with `status` says of the context.
  void follow(uint16_t function, int32_t status) {
    if (const ForkedChild* fork = faults_.forked_child;
        fork != nullptr && function == fork->init && status == success_ &&
        !initialized_.exchange(true, std::memory_order_relaxed)) {
      follow_forks(this);  // from the first initialization on: a fork's child is refused
    }
    if (std::ranges::find(faults_.sticky, status) != faults_.sticky.end()) {
      sticky_.store(status, std::memory_order_relaxed);
    } else if (status == success_ && listed(faults_.clearing, function)) {
      sticky_.store(success_, std::memory_order_relaxed);
    }
    if (status == faults_.unavailable) {
      unavailable_.store(true, std::memory_order_relaxed);
    } else if (status == success_ && !listed(faults_.context_free, function)) {
      unavailable_.store(false, std::memory_order_relaxed);
    }
  }

  // The sticky status every call answers now, or the success status when there is none.
  int32_t sticky() const { return sticky_.load(std::memory_order_relaxed); }
  bool has_sticky() const { return sticky() != success_; }
  // Whether calls sent ahead are to be waited for (the device could not be had).
  bool unavailable() const { return unavailable_.load(std::memory_order_relaxed); }

  // In a child forked after the library was initialized, the status `function` answers there
  // without being sent (ForkedChild); nothing otherwise.
  std::optional<int32_t> forked_refusal(uint16_t function) const {
    if (!forked_after_init_.load(std::memory_order_relaxed)) return std::nullopt;
    if (listed(faults_.forked_child->answered, function)) return std::nullopt;
    return faults_.forked_child->status;
  }
  // The same for what the stub answers itself: the ForkedChild status, or success.
  int32_t forked_child_status() const {
    return forked_after_init_.load(std::memory_order_relaxed) ? faults_.forked_child->status
                                                              : success_;
  }

 private:
  static bool listed(std::span<const uint16_t> functions, uint16_t function) {
    return std::ranges::find(functions, function) != functions.end();
  }

  // The states a fork's child handler marks, in fixed slots: the handler runs in the child,
  // where a lock another thread of the parent held would stay held. A stub library has one.
  static constexpr int kForkFollowers = 8;
  static std::atomic<ContextFaultState*>* fork_followers() {
    static std::atomic<ContextFaultState*> followers[kForkFollowers]{};
    return followers;
  }
  static void mark_forked_child() {
    for (int i = 0; i < kForkFollowers; ++i) {
      if (ContextFaultState* s = fork_followers()[i].load(std::memory_order_relaxed)) {
        s->forked_after_init_.store(s->initialized_.load(std::memory_order_relaxed),
                                    std::memory_order_relaxed);
      }
    }
  }
  static void follow_forks(ContextFaultState* state) {
    static std::once_flag handler;
    std::call_once(handler, [] { ::pthread_atfork(nullptr, nullptr, &mark_forked_child); });
    for (int i = 0; i < kForkFollowers; ++i) {
      ContextFaultState* empty = nullptr;
      if (fork_followers()[i].compare_exchange_strong(empty, state)) return;
    }
  }
  static void stop_following_forks(ContextFaultState* state) {
    for (int i = 0; i < kForkFollowers; ++i) {
      ContextFaultState* expected = state;
      fork_followers()[i].compare_exchange_strong(expected, nullptr);
    }
  }

  const ContextFaults& faults_;
  const int32_t success_;
  std::atomic<int32_t> sticky_;
  std::atomic<bool> unavailable_{false};
  std::atomic<bool> initialized_{false};        // in this process or the one it was forked from
  std::atomic<bool> forked_after_init_{false};  // this process is a child forked after it
};

}  // namespace gvirtus::stub

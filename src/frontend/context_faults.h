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
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>

namespace gvirtus::stub {

struct ContextFaults {
  std::span<const int32_t> sticky;
  int32_t unavailable;
  std::span<const uint16_t> clearing;      // functions whose success clears a sticky status
  std::span<const uint16_t> context_free;  // functions that succeed without a context
};

class ContextFaultState {
 public:
  constexpr ContextFaultState(const ContextFaults& faults, int32_t success)
      : faults_(faults), success_(success), sticky_(success) {}

  // What the reply of `function` with `status` says of the context.
  void follow(uint16_t function, int32_t status) {
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

 private:
  static bool listed(std::span<const uint16_t> functions, uint16_t function) {
    return std::ranges::find(functions, function) != functions.end();
  }

  const ContextFaults& faults_;
  const int32_t success_;
  std::atomic<int32_t> sticky_;
  std::atomic<bool> unavailable_{false};
};

}  // namespace gvirtus::stub

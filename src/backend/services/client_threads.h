// What a library keeps per host thread (the driver's current context, the runtime's current
// device), kept per client thread: a shared backend service of the cuda and cudart plugins.
//
// A client thread's calls run on one backend thread (backend/session.cpp keeps the first client
// thread on the reading thread when the session switches to executors), but beyond the session's
// bound on executors client threads share them. The library's per-thread state stays with the
// backend thread, so without this a client thread sharing one would find another client thread's
// context current, or none (CUDA_ERROR_INVALID_CONTEXT from its next call), and its device.
//
// ClientThreads<T> remembers the state each client thread left (note(), after a call) and puts
// it back (set) on the backend thread its next call runs on, when that backend thread last
// served another client thread or none. A backend thread that keeps serving one client thread
// pays one comparison per call.
//
// Thread affinity: any thread; one instance per plugin, one session per worker process (reset()
// as a session opens).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace gvirtus::services {

template <typename T>
class ClientThreads {
 public:
  // Puts `state` in place on the calling backend thread (the library's set call).
  using Set = void (*)(T state);

  // `initial` is what a client thread has before it set anything (no context, device 0).
  ClientThreads(Set set, T initial) : set_(set), initial_(initial) {}

  // Before a call of `client_thread` runs on the calling backend thread.
  void before_call(uint32_t client_thread) {
    Served& served = served_here();
    if (served.owner == this && served.serving && served.client_thread == client_thread) return;
    T wanted = initial_;
    bool known = false;
    {
      std::lock_guard lock(mutex_);
      if (const auto it = states_.find(client_thread); it != states_.end()) {
        wanted = it->second;
        known = true;
      }
    }
    // A backend thread that served no client thread yet has the initial state already, so a
    // client thread never seen before costs nothing; any other switch puts the state back.
    if (known || served.owner == this) set_(wanted);
    served = {this, true, client_thread, wanted};
  }

  // After a call: `state` is what the calling backend thread's client thread has now.
  void note(T state) {
    Served& served = served_here();
    if (served.owner != this || !served.serving || served.state == state) return;
    served.state = state;
    std::lock_guard lock(mutex_);
    states_[served.client_thread] = state;
  }

  // A session opens: no client thread has set anything yet.
  void reset() {
    std::lock_guard lock(mutex_);
    states_.clear();
    generation_.fetch_add(1, std::memory_order_release);
  }

 private:
  struct Served {
    const ClientThreads* owner = nullptr;  // null: this backend thread served no call yet
    bool serving = false;                  // false: the client thread is an earlier session's
    uint32_t client_thread = 0;
    T state{};
  };

  Served& served_here() {
    thread_local Served served;
    thread_local uint64_t generation = 0;
    // A new session: the client thread this backend thread served is the last one's; the
    // library state here is still whatever it left (so the next call sets its own).
    if (const uint64_t now = generation_.load(std::memory_order_acquire); generation != now) {
      served.serving = false;
      generation = now;
    }
    return served;
  }

  Set set_;
  T initial_;
  std::mutex mutex_;  // guards states_
  std::unordered_map<uint32_t, T> states_;
  std::atomic<uint64_t> generation_{1};  // changed by reset()
};

}  // namespace gvirtus::services

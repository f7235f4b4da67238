// Host gates: the backend's half of host functions that run on the client (a shared backend
// service of the cuda and cudart plugins; the client's half is frontend/host_callbacks.h).
//
// A host function (cuLaunchHostFunc, cuStreamAddCallback, a graph's host node) is the
// application's code, so it runs in the application. The backend enqueues a gate in its place:
// a host function of its own, whose data is a Gate naming the client's callback by a token. When
// the library runs the gate (on its own callback thread, in stream order), the gate is reached:
// it queues {run, token, status} and blocks until the client says that run is done. The client's
// callback thread asks for reached gates with next(), a call that waits; it runs the function
// and names the finished run in its next next(). So the stream's later work starts after the
// client's function has returned, the order CUDA guarantees, and the enqueueing call itself
// returns at once, as natively.
//
// A user object's destructor is a gate too, one that nothing waits on (notify()).
//
// A gate made for one run (a host function enqueued on a stream that is not capturing, a
// destructor) is freed after it; any other (a graph's host node, a host function captured into a
// graph) lives until the session ends, since the graph may run it any number of times. next() says
// which, so the client knows when to forget its token. At most kMaxGates gates live at once.
//
// A gate never outwaits its client: once the session's client is gone (SessionInfo::client_gone)
// or close() was called, every waiting gate returns and later ones return at once, so a worker
// whose client died never hangs in the library.
//
// Thread affinity: any thread; one instance per plugin, one session per worker process
// (host_gates() is reset as a session opens).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "common/wire.h"

namespace gvirtus::services {

class HostGates;

// What the library gets as a gate's data: opaque to it, checked by address when it comes back.
struct Gate {
  HostGates* owner;
  uint64_t token;  // the client's callback
  bool once;       // freed after its run
};

// A gate the library ran, for the client to run its callback.
struct ReachedGate {
  uint64_t run;    // names this run in the next next() call, which releases it
  uint64_t token;  // the client's callback
  int32_t status;  // a stream callback's status (0 for a host function)
  bool once;       // the gate is gone after this run: the client may forget the token
};

class HostGates {
 public:
  static constexpr size_t kMaxGates = size_t{1} << 20;
  // How long one next() call may wait at most.
  static constexpr std::chrono::milliseconds kMaxWait{60000};

  HostGates() = default;
  ~HostGates();
  HostGates(const HostGates&) = delete;
  HostGates& operator=(const HostGates&) = delete;

  // A new session: `client_gone` (may be null) says when its client is gone. Gates of an earlier
  // session are released and forgotten.
  void open(const std::atomic<int>* client_gone);
  // Releases every waiting gate; later gates return at once. For tests and session ends.
  void close();

  // A gate for the client's callback `token` (non-zero), or null when kMaxGates live already.
  Gate* make(uint64_t token, bool once);
  // Frees a gate the library refused (its enqueue failed), so never ran.
  void discard(Gate* gate);
  // The token of `data`, a gate's data the library handed back (a host node's parameters), or 0
  // when it is none of this session's gates.
  uint64_t token_of(const void* data) const;

  // The library's side: reaches `gate` with `status` and waits until the client releases the run
  // (or is gone). `gate` is the data the library was given.
  static void reach(void* gate, int32_t status);

  // The same for a gate nothing waits on (a user object's destructor: the library runs it on a
  // shared thread that must not block): queued for the client, and the library goes on at once.
  // `status` reaches the client's callback (a notification's sequence: notification_relay.h).
  static void notify(void* gate, int32_t status = 0);

  // The client's side: releases run `done` (0: none; an unknown run is ignored), then waits up to
  // `wait` for a reached gate. nullopt when none was reached in time or the session is ending.
  std::optional<ReachedGate> next(uint64_t done, std::chrono::milliseconds wait);

 private:
  bool gone() const;
  void reach_gate(Gate* gate, int32_t status, bool wait);

  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable changed_;
  std::unordered_map<const Gate*, std::unique_ptr<Gate>> gates_;
  std::deque<ReachedGate> reached_;              // not yet handed to the client
  std::unordered_map<uint64_t, bool> released_;  // each waiting run: whether the client is done
  uint64_t next_run_ = 1;
  bool closed_ = false;
  const std::atomic<int>* client_gone_ = nullptr;
};

// The plugin's gates (never destroyed: the library may still hold a gate at exit).
HostGates& host_gates();

// Serves a plugin's "next" row (gvirtusHostCallbackNext) on `gates`: request u64 the run the
// client finished (0: none), u32 milliseconds to wait at most; reply i32 0 (the library's
// success), u8 reached, then when reached u64 run, u64 token, i32 status, u8 once.
void serve_next_gate(HostGates& gates, WireReader& in, WireWriter& out);

}  // namespace gvirtus::services

// GVIRTUS_STATS: per-call counters of the frontend, printed as a table to stderr at exit.
//
// With GVIRTUS_STATS set (to anything but "" or "0") when the process starts, Client::call() and
// Client::send_async() count, per call id: calls, synchronous and asynchronous ones, failures,
// request and reply payload bytes (frame headers excluded), and the time spent on the transport:
// from send to decoded reply for a synchronous call, inside send() for an asynchronous one.
//
// Cost: when off, each call tests a flag read once at start-up (a relaxed load and an always
// predicted branch; the scope objects below stay inert, no clock is read). When on, a call does a
// few relaxed atomic additions into fixed arrays indexed by plugin and function id: no allocation,
// no lock. Ids beyond the arrays share one "other" row.
//
// The core stays plugin-agnostic: a plugin registers a naming function for its ids (the cudart
// stub does, from its generated table); calls of a plugin without one print as "plugin:function".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/function_ref.h"
#include "common/wire.h"
#include "communicators/communicator.h"

namespace gvirtus {

namespace call_stats_detail {
// Set once, by a static initializer of call_stats.cpp, from the environment; constant-initialised
// to false so that a call made before that initializer is simply not counted.
extern std::atomic<bool> g_enabled;
}  // namespace call_stats_detail

// Whether GVIRTUS_STATS is on. The one branch a call pays when it is off.
inline bool call_stats_enabled() {
  return call_stats_detail::g_enabled.load(std::memory_order_relaxed);
}

// The bytes of a payload's pieces.
uint64_t payload_bytes(std::span<const ByteView> payload);

// Gives the name of `function` of one plugin (NUL-terminated, static), or "" or null if it has
// none. A C function pointer: stubs register theirs through the frontend's C ABI.
using CallNamer = const char* (*)(uint16_t function);

// Registers the names of a plugin's calls for the table; call before the process exits (a static
// initializer of the plugin's stub is the usual place). Thread-safe; the last registration wins.
void register_call_names(uint16_t plugin, std::string_view plugin_name, CallNamer namer);

// Counts one synchronous call from construction to destruction (the caller's scope around send
// and wait). Inert when stats are off. The call counts as failed when its scope ends by an
// exception. Use on one thread.
class SyncCallStats {
 public:
  using ReplyDecoder = FunctionRef<void(WireReader&)>;

  SyncCallStats(uint32_t call_id, std::span<const ByteView> payload, ReplyDecoder decode)
      : decode_(decode) {
    if (call_stats_enabled()) [[unlikely]]
      begin(call_id, payload_bytes(payload));
  }
  // A pipelined call (Client::begin_call), counted when its reply is awaited; `request_bytes`
  // were sent at its start.
  SyncCallStats(uint32_t call_id, uint64_t request_bytes, ReplyDecoder decode) : decode_(decode) {
    if (call_stats_enabled()) [[unlikely]]
      begin(call_id, request_bytes);
  }
  ~SyncCallStats() {
    if (active_) [[unlikely]]
      end();
  }
  SyncCallStats(const SyncCallStats&) = delete;
  SyncCallStats& operator=(const SyncCallStats&) = delete;

  // The decoder to wait with: the caller's, or (when counting) this object, which notes the
  // reply's size and then runs the caller's.
  ReplyDecoder decoder() { return active_ ? ReplyDecoder(*this) : decode_; }
  void operator()(WireReader& in);

 private:
  void begin(uint32_t call_id, uint64_t request_bytes);
  void end();

  ReplyDecoder decode_;
  bool active_ = false;
  uint32_t call_id_ = 0;
  uint64_t request_bytes_ = 0;
  uint64_t reply_bytes_ = 0;
  std::chrono::steady_clock::time_point start_;
  int exceptions_at_start_ = 0;
};

// Counts one asynchronous call the same way (its scope is the send).
class AsyncCallStats {
 public:
  AsyncCallStats(uint32_t call_id, std::span<const ByteView> payload) {
    if (call_stats_enabled()) [[unlikely]]
      begin(call_id, payload);
  }
  ~AsyncCallStats() {
    if (active_) [[unlikely]]
      end();
  }
  AsyncCallStats(const AsyncCallStats&) = delete;
  AsyncCallStats& operator=(const AsyncCallStats&) = delete;

 private:
  void begin(uint32_t call_id, std::span<const ByteView> payload);
  void end();

  bool active_ = false;
  uint32_t call_id_ = 0;
  uint64_t request_bytes_ = 0;
  std::chrono::steady_clock::time_point start_;
  int exceptions_at_start_ = 0;
};

// Counts work a stub did beyond single calls, by what it was ("copy relayed backend0 ->
// backend2": a copy between two backends of a pool): how many, their bytes and time, printed in
// a second table after the calls'. Inert when stats are off. Thread-safe.
void note_stats_work(std::string_view what, uint64_t bytes, uint64_t nanoseconds);

// The table as printed at exit (every id with at least one call, then totals). For tests.
std::string format_call_stats();

}  // namespace gvirtus

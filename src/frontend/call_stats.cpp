#include "frontend/call_stats.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <string>

#include "common/frame.h"
#include "protocol/core_calls.h"

namespace gvirtus {
namespace {

// Fixed bounds, so that counting never allocates. 1024 functions per plugin leave room for the
// whole CUDA runtime (~420 functions) in one table; 8 plugins for cudart, cuBLAS, cuFFT and kin.
constexpr size_t kMaxPlugins = 8;
constexpr size_t kMaxFunctions = 1024;
constexpr size_t kOtherRow = kMaxPlugins * kMaxFunctions;  // every id beyond the bounds

// One row of counters. Relaxed atomics: threads only add, and the table is read at exit, after
// they are done (a thread still calling at exit may be miscounted by its last call, no worse).
struct Counters {
  std::atomic<uint64_t> sync_calls{0};
  std::atomic<uint64_t> async_calls{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<uint64_t> request_bytes{0};
  std::atomic<uint64_t> reply_bytes{0};
  std::atomic<uint64_t> transport_ns{0};  // send to reply (sync), inside send (async)
};

// Zero-initialised static storage: its pages cost nothing until a call id touches them.
Counters g_rows[kOtherRow + 1];

struct Naming {
  std::atomic<CallNamer> namer{nullptr};
  char name[24] = {};  // the plugin's name, NUL-terminated; written before namer is published
};
Naming g_names[kMaxPlugins];

size_t row_of(uint32_t call_id) {
  const size_t plugin = call_plugin(call_id);
  const size_t function = call_function(call_id);
  if (plugin >= kMaxPlugins || function >= kMaxFunctions) return kOtherRow;
  return plugin * kMaxFunctions + function;
}

uint64_t ns_since(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

const char* core_name(uint16_t function) {
#define GVIRTUS_CORE_CALL_NAME(name, id, kind, args) \
  case id:                                           \
    return #name;
  switch (function) { GVIRTUS_CORE_CALLS(GVIRTUS_CORE_CALL_NAME) }
#undef GVIRTUS_CORE_CALL_NAME
  return "";
}

std::string row_name(size_t row) {
  if (row == kOtherRow) return "(ids beyond the table)";
  const auto plugin = static_cast<uint16_t>(row / kMaxFunctions);
  const auto function = static_cast<uint16_t>(row % kMaxFunctions);
  const Naming& naming = g_names[plugin];
  const CallNamer namer = naming.namer.load(std::memory_order_acquire);
  const char* name = namer != nullptr ? namer(function) : nullptr;
  if (name == nullptr || *name == '\0')
    return std::to_string(plugin) + ":" + std::to_string(function);
  return std::string(naming.name) + "." + std::string(name);
}

// Work beyond single calls (note_stats_work), by what it was. Rare (a relayed copy moves megabytes
// per note): a lock and a map do. Defined before g_initialised registers print_at_exit, so they
// are destroyed after it has printed them.
struct Work {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t ns = 0;
};
std::mutex g_work_mutex;
std::map<std::string, Work, std::less<>> g_work;

void print_at_exit() {
  const std::string table = format_call_stats();
  std::fputs(table.c_str(), stderr);
}

// A forked child has its own session (see Client) and prints its own table at its exit: it
// starts counting from zero rather than repeating its parent's calls.
void reset_in_child() {
  g_work.clear();  // the forking thread is the only one in the child: no lock is held
  for (Counters& row : g_rows) {
    for (auto* counter : {&row.sync_calls, &row.async_calls, &row.failed, &row.request_bytes,
                          &row.reply_bytes, &row.transport_ns}) {
      counter->store(0, std::memory_order_relaxed);
    }
  }
}

bool env_enabled() {
  const char* value = std::getenv("GVIRTUS_STATS");
  return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

// Runs at load time of the program or stub library that links this file.
const bool g_initialised = [] {
  register_call_names(core::kPluginId, core::kIdentity.name, core_name);
  if (env_enabled()) {
    call_stats_detail::g_enabled.store(true, std::memory_order_relaxed);
    std::atexit(print_at_exit);
    ::pthread_atfork(nullptr, nullptr, reset_in_child);
  }
  return true;
}();

}  // namespace

uint64_t payload_bytes(std::span<const ByteView> payload) {
  uint64_t bytes = 0;
  for (const ByteView& piece : payload) bytes += piece.size();
  return bytes;
}

namespace call_stats_detail {
std::atomic<bool> g_enabled{false};
}  // namespace call_stats_detail

void note_stats_work(std::string_view what, uint64_t bytes, uint64_t nanoseconds) {
  if (!call_stats_enabled()) return;
  std::lock_guard lock(g_work_mutex);
  auto it = g_work.find(what);
  if (it == g_work.end()) it = g_work.emplace(std::string(what), Work{}).first;
  it->second.count += 1;
  it->second.bytes += bytes;
  it->second.ns += nanoseconds;
}

void register_call_names(uint16_t plugin, std::string_view plugin_name, CallNamer namer) {
  if (plugin >= kMaxPlugins) return;  // its calls print in the "other" row anyway
  Naming& naming = g_names[plugin];
  const size_t length = std::min(plugin_name.size(), sizeof(naming.name) - 1);
  plugin_name.copy(naming.name, length);
  naming.name[length] = '\0';
  naming.namer.store(namer, std::memory_order_release);
}

void SyncCallStats::begin(uint32_t call_id, uint64_t request_bytes) {
  active_ = true;
  call_id_ = call_id;
  request_bytes_ = request_bytes;
  exceptions_at_start_ = std::uncaught_exceptions();
  start_ = std::chrono::steady_clock::now();
}

void SyncCallStats::operator()(WireReader& in) {
  reply_bytes_ = in.remaining();
  decode_(in);
}

void SyncCallStats::end() {
  Counters& row = g_rows[row_of(call_id_)];
  row.transport_ns.fetch_add(ns_since(start_), std::memory_order_relaxed);
  row.sync_calls.fetch_add(1, std::memory_order_relaxed);
  if (std::uncaught_exceptions() > exceptions_at_start_) {
    row.failed.fetch_add(1, std::memory_order_relaxed);
  }
  row.request_bytes.fetch_add(request_bytes_, std::memory_order_relaxed);
  row.reply_bytes.fetch_add(reply_bytes_, std::memory_order_relaxed);
}

void AsyncCallStats::begin(uint32_t call_id, std::span<const ByteView> payload) {
  active_ = true;
  call_id_ = call_id;
  request_bytes_ = payload_bytes(payload);
  exceptions_at_start_ = std::uncaught_exceptions();
  start_ = std::chrono::steady_clock::now();
}

void AsyncCallStats::end() {
  Counters& row = g_rows[row_of(call_id_)];
  row.transport_ns.fetch_add(ns_since(start_), std::memory_order_relaxed);
  row.async_calls.fetch_add(1, std::memory_order_relaxed);
  if (std::uncaught_exceptions() > exceptions_at_start_) {
    row.failed.fetch_add(1, std::memory_order_relaxed);
  }
  row.request_bytes.fetch_add(request_bytes_, std::memory_order_relaxed);
}

std::string format_call_stats() {
  (void)g_initialised;
  std::string out;
  char line[256];
  auto put = [&](const std::string& name, uint64_t sync, uint64_t async, uint64_t failed,
                 uint64_t request, uint64_t reply, uint64_t ns) {
    const double ms = static_cast<double>(ns) / 1e6;
    const double mean_us = sync + async > 0 ? static_cast<double>(ns) / 1e3 / (sync + async) : 0;
    std::snprintf(line, sizeof line,
                  "%-32s %10" PRIu64 " %10" PRIu64 " %6" PRIu64 " %14" PRIu64 " %14" PRIu64
                  " %12.3f %10.2f\n",
                  name.c_str(), sync, async, failed, request, reply, ms, mean_us);
    out += line;
  };
  std::snprintf(line, sizeof line, "gvirtus call stats (pid %d)\n", static_cast<int>(::getpid()));
  out += line;
  std::snprintf(line, sizeof line, "%-32s %10s %10s %6s %14s %14s %12s %10s\n", "call", "sync",
                "async", "failed", "request_bytes", "reply_bytes", "transport_ms", "mean_us");
  out += line;
  uint64_t totals[6] = {};
  for (size_t row = 0; row <= kOtherRow; ++row) {
    const Counters& c = g_rows[row];
    const uint64_t values[6] = {c.sync_calls.load(std::memory_order_relaxed),
                                c.async_calls.load(std::memory_order_relaxed),
                                c.failed.load(std::memory_order_relaxed),
                                c.request_bytes.load(std::memory_order_relaxed),
                                c.reply_bytes.load(std::memory_order_relaxed),
                                c.transport_ns.load(std::memory_order_relaxed)};
    if (values[0] + values[1] == 0) continue;
    for (size_t i = 0; i < 6; ++i) totals[i] += values[i];
    put(row_name(row), values[0], values[1], values[2], values[3], values[4], values[5]);
  }
  put("total", totals[0], totals[1], totals[2], totals[3], totals[4], totals[5]);
  std::lock_guard lock(g_work_mutex);
  if (g_work.empty()) return out;
  std::snprintf(line, sizeof line, "%-40s %10s %16s %12s %10s\n", "work", "count", "bytes", "ms",
                "MB/s");
  out += line;
  for (const auto& [what, w] : g_work) {
    const double ms = static_cast<double>(w.ns) / 1e6;
    const double mb_per_s = w.ns > 0 ? static_cast<double>(w.bytes) / 1e6 / (w.ns / 1e9) : 0;
    std::snprintf(line, sizeof line, "%-40s %10" PRIu64 " %16" PRIu64 " %12.3f %10.1f\n",
                  what.c_str(), w.count, w.bytes, ms, mb_per_s);
    out += line;
  }
  return out;
}

}  // namespace gvirtus

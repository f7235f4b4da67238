#include "backend/session_table.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/error.h"

namespace gvirtus {

namespace {
enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kLive = 2 };
}  // namespace

// One session's published facts. Lives in memory shared by the daemon and all its workers, so
// only lock-free atomics and plain bytes are used.
struct SessionSlot {
  std::atomic<uint32_t> state;
  std::atomic<uint32_t> seq;  // odd while the strings below are being written
  uint32_t worker_pid;
  uint32_t client_pid;
  uint64_t started_unix_s;
  char peer[128];  // longer texts are cut (an IPv6 address with its port fits)
  char transport[16];
  char program[64];
  char plugins[128];  // the plugins open in the session, comma-separated (core left out)
  std::atomic<uint64_t> calls;
  std::atomic<uint64_t> bytes_in;
  std::atomic<uint64_t> bytes_out;
  std::atomic<uint64_t> device_bytes;  // allocated by the session's plugins
  std::atomic<uint32_t> monitor;       // 1 once the session asked for the status (gvirtus-smi)
};
static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "slots are shared between processes: their atomics must be lock-free");

namespace {

void copy_bounded(char* out, size_t size, const std::string& text) {
  const size_t n = std::min(size - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

std::string read_bounded(const char* in, size_t size) {
  return std::string(in, strnlen(in, size));
}

uint64_t unix_now_s() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

SessionTable* g_table = nullptr;
int g_slot = -1;
bool g_status_only = false;

}  // namespace

uint32_t session_table_capacity(uint32_t max_sessions) {
  constexpr uint64_t kMax = kMaxStatusSessions;
  return static_cast<uint32_t>(
      std::min<uint64_t>(uint64_t{max_sessions} + kStatusOnlySessions, kMax));
}

SessionTable::SessionTable(uint32_t capacity)
    : capacity_(capacity),
      daemon_pid_(::getpid()),
      started_unix_s_(unix_now_s()),
      bytes_(sizeof(SessionSlot) * std::max<uint32_t>(capacity, 1)) {
  // MAP_NORESERVE: a large max_sessions costs address space, not memory, until slots are used.
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) raise_errno("mmap of the session table", errno);
  slots_ = static_cast<SessionSlot*>(p);  // zero-filled: every slot is kFree
}

SessionTable::~SessionTable() {
  ::munmap(slots_, bytes_);
}

int SessionTable::claim() {
  for (uint32_t i = 0; i < capacity_; ++i) {
    uint32_t expected = kFree;
    if (slots_[i].state.compare_exchange_strong(expected, kClaimed)) {
      slots_[i].calls.store(0, std::memory_order_relaxed);
      slots_[i].bytes_in.store(0, std::memory_order_relaxed);
      slots_[i].bytes_out.store(0, std::memory_order_relaxed);
      slots_[i].device_bytes.store(0, std::memory_order_relaxed);
      slots_[i].plugins[0] = '\0';  // not live yet: no reader looks at it
      return static_cast<int>(i);
    }
  }
  return -1;
}

void SessionTable::release(int slot) {
  if (slot < 0 || static_cast<uint32_t>(slot) >= capacity_) return;
  slots_[slot].state.store(kFree, std::memory_order_release);
}

void SessionTable::publish(int slot, pid_t worker_pid, const std::string& peer,
                           const std::string& transport, const std::string& program,
                           uint32_t client_pid) {
  if (slot < 0 || static_cast<uint32_t>(slot) >= capacity_) return;
  SessionSlot& s = slots_[slot];
  s.seq.fetch_add(1, std::memory_order_acq_rel);  // odd: readers retry
  s.worker_pid = static_cast<uint32_t>(worker_pid);
  s.client_pid = client_pid;
  s.started_unix_s = unix_now_s();
  copy_bounded(s.peer, sizeof s.peer, peer);
  copy_bounded(s.transport, sizeof s.transport, transport);
  copy_bounded(s.program, sizeof s.program, program);
  s.seq.fetch_add(1, std::memory_order_release);  // even: consistent
  // The figures count from here: the handshake is not a call (nothing else counts yet).
  s.calls.store(0, std::memory_order_relaxed);
  s.bytes_in.store(0, std::memory_order_relaxed);
  s.bytes_out.store(0, std::memory_order_relaxed);
  s.monitor.store(0, std::memory_order_relaxed);
  s.state.store(kLive, std::memory_order_release);
}

void SessionTable::mark_monitor(int slot) {
  if (slot < 0 || static_cast<uint32_t>(slot) >= capacity_) return;
  slots_[slot].monitor.store(1, std::memory_order_release);
}

void SessionTable::publish_plugins(int slot, const std::string& plugins) {
  if (slot < 0 || static_cast<uint32_t>(slot) >= capacity_) return;
  SessionSlot& s = slots_[slot];
  // Also before publish() (the handshake opens plugins first): the slot is this worker's already,
  // and publish() leaves the plugins as they are.
  s.seq.fetch_add(1, std::memory_order_acq_rel);
  copy_bounded(s.plugins, sizeof s.plugins, plugins);
  s.seq.fetch_add(1, std::memory_order_release);
}

std::atomic<uint64_t>* SessionTable::device_bytes(int slot) {
  if (slot < 0 || static_cast<uint32_t>(slot) >= capacity_) return nullptr;
  return &slots_[slot].device_bytes;
}

void SessionTable::count_request(int slot, uint64_t bytes) {
  if (slot < 0 || static_cast<uint32_t>(slot) >= capacity_) return;
  slots_[slot].calls.fetch_add(1, std::memory_order_relaxed);
  slots_[slot].bytes_in.fetch_add(bytes, std::memory_order_relaxed);
}

void SessionTable::count_reply(int slot, uint64_t bytes) {
  if (slot < 0 || static_cast<uint32_t>(slot) >= capacity_) return;
  slots_[slot].bytes_out.fetch_add(bytes, std::memory_order_relaxed);
}

std::vector<SessionStatus> SessionTable::snapshot() const {
  std::vector<SessionStatus> out;
  for (uint32_t i = 0; i < capacity_; ++i) {
    const SessionSlot& s = slots_[i];
    if (s.state.load(std::memory_order_acquire) != kLive) continue;
    if (s.monitor.load(std::memory_order_acquire) != 0) continue;
    SessionStatus status;
    // A writer publishes once per session; a few retries cover a slot being reused meanwhile.
    bool consistent = false;
    for (int attempt = 0; attempt < 100 && !consistent; ++attempt) {
      const uint32_t before = s.seq.load(std::memory_order_acquire);
      if (before % 2 != 0) continue;
      status.worker_pid = s.worker_pid;
      status.client_pid = s.client_pid;
      status.started_unix_s = s.started_unix_s;
      status.peer = read_bounded(s.peer, sizeof s.peer);
      status.transport = read_bounded(s.transport, sizeof s.transport);
      status.program = read_bounded(s.program, sizeof s.program);
      status.plugins = read_bounded(s.plugins, sizeof s.plugins);
      std::atomic_thread_fence(std::memory_order_acquire);
      consistent = s.seq.load(std::memory_order_relaxed) == before;
    }
    if (!consistent || s.state.load(std::memory_order_acquire) != kLive) continue;
    status.calls = s.calls.load(std::memory_order_relaxed);
    status.bytes_in = s.bytes_in.load(std::memory_order_relaxed);
    status.bytes_out = s.bytes_out.load(std::memory_order_relaxed);
    status.allocated_bytes = s.device_bytes.load(std::memory_order_relaxed);
    out.push_back(std::move(status));
  }
  return out;
}

void set_current_session_slot(SessionTable* table, int slot, bool status_only) {
  g_table = table;
  g_slot = slot;
  g_status_only = status_only;
}

bool current_session_is_status_only() {
  return g_status_only;
}

std::atomic<uint64_t>* current_session_device_bytes() {
  return g_table != nullptr ? g_table->device_bytes(g_slot) : nullptr;
}

SessionTable* current_session_table() {
  return g_table;
}

void publish_current_session(const std::string& peer, const std::string& transport,
                             const std::string& program, uint32_t client_pid) {
  if (g_table != nullptr)
    g_table->publish(g_slot, ::getpid(), peer, transport, program, client_pid);
}

void publish_current_session_plugins(const std::string& plugins) {
  if (g_table != nullptr) g_table->publish_plugins(g_slot, plugins);
}

void mark_current_session_monitor() {
  if (g_table != nullptr) g_table->mark_monitor(g_slot);
}

void count_current_request(uint64_t bytes) {
  if (g_table != nullptr) g_table->count_request(g_slot, bytes);
}

void count_current_reply(uint64_t bytes) {
  if (g_table != nullptr) g_table->count_reply(g_slot, bytes);
}

}  // namespace gvirtus

// The daemon's view of its sessions, which live in forked worker processes.
//
// The daemon maps one shared anonymous region before it forks anything, so every worker inherits
// it. The daemon claims a slot for each worker it forks and frees it when it reaps the worker; the
// worker publishes who its client is once the handshake is done and counts its requests and
// replies (relaxed atomic adds: no lock and no system call on the data path). A status query is
// served by a worker too (it reads every slot), so the single-threaded daemon never blocks on a
// client. Strings are published under a per-slot sequence counter, so a reader never sees a
// half-written one.
//
// Thread affinity: claim/release on the daemon's thread; publish/count on any worker thread;
// snapshot anywhere. Nothing here throws on the data path.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/status.h"

namespace gvirtus {

struct SessionSlot;

// Sessions the daemon accepts beyond limits.max_sessions for status queries only, so that
// gvirtus-smi can still see a backend whose sessions are all busy (its worker answers Status and
// refuses any other call as "overloaded").
inline constexpr uint32_t kStatusOnlySessions = 4;

// Slots for a daemon of `max_sessions`: one per session and status-only session, at most as many
// as a status reply may list (sessions beyond that are served but not listed).
uint32_t session_table_capacity(uint32_t max_sessions);

class SessionTable {
 public:
  // Maps room for `capacity` sessions (MAP_SHARED | MAP_ANONYMOUS). Throws Error on failure.
  explicit SessionTable(uint32_t capacity);
  ~SessionTable();
  SessionTable(const SessionTable&) = delete;
  SessionTable& operator=(const SessionTable&) = delete;

  uint32_t capacity() const { return capacity_; }
  // limits.max_sessions of the daemon (for status replies); set by the daemon.
  uint32_t max_sessions() const { return max_sessions_; }
  void set_max_sessions(uint32_t n) { max_sessions_ = n; }
  pid_t daemon_pid() const { return daemon_pid_; }
  uint64_t started_unix_s() const { return started_unix_s_; }

  // Daemon: a free slot for the worker about to be forked, or -1 when every slot is taken.
  int claim();
  // Daemon: the worker in `slot` has been reaped.
  void release(int slot);

  // Worker: the client this slot serves, after its handshake; the slot appears in snapshots.
  void publish(int slot, pid_t worker_pid, const std::string& peer, const std::string& transport,
               const std::string& program, uint32_t client_pid);
  // Worker: the plugins open in the session ("cudart,cuda"), again whenever one joins; also
  // before publish() (they show once the session does).
  void publish_plugins(int slot, const std::string& plugins);
  // Worker: the counter of device memory the session's plugins have allocated; null for -1.
  std::atomic<uint64_t>* device_bytes(int slot);
  // Worker: one request of `bytes` received / one reply of `bytes` sent.
  void count_request(int slot, uint64_t bytes);
  void count_reply(int slot, uint64_t bytes);

  // Worker: the session asked for the status - a monitor's (gvirtus-smi), never listed, so that
  // one query's session, which outlives its client until the worker sees it gone, does not show
  // in the next query as an application's.
  void mark_monitor(int slot);

  // Every published session but monitors' (device memory left unknown: the caller adds it).
  std::vector<SessionStatus> snapshot() const;

 private:
  uint32_t capacity_;
  uint32_t max_sessions_ = 0;
  pid_t daemon_pid_;
  uint64_t started_unix_s_;
  size_t bytes_;
  SessionSlot* slots_;
};

// The slot of the session this worker process serves, set by the daemon right after fork(). The
// session code reports through these; in a process with no table (tests that run a session
// directly) they do nothing.
void set_current_session_slot(SessionTable* table, int slot, bool status_only = false);
// Whether this worker was accepted beyond max_sessions and may serve only status queries.
bool current_session_is_status_only();
// The counter plugins keep this session's allocated device memory in (SessionInfo), or null.
std::atomic<uint64_t>* current_session_device_bytes();
SessionTable* current_session_table();
void publish_current_session(const std::string& peer, const std::string& transport,
                             const std::string& program, uint32_t client_pid);
void publish_current_session_plugins(const std::string& plugins);
void mark_current_session_monitor();
void count_current_request(uint64_t bytes);
void count_current_reply(uint64_t bytes);

}  // namespace gvirtus

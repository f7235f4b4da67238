// What differs between the shm rendezvous modes once a session runs: how a side sleeps, how it
// wakes the other side and how it learns that the other side is gone. The connection (data path)
// is the same for both. Both ring and sleep with futexes on the waiting words (shm_futex.h); socket
// mode learns that the peer is gone from the Unix socket (shm_socket.cpp), file mode from
// heartbeats in the header, and its sleeps are timed as no futex crosses a VM (shm_file.cpp).
//
// A link owns the mapped segment and every descriptor of one side of one session. Its methods
// may be called from the connection's send() and recv() threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "communicators/shm/shm_layout.h"

namespace gvirtus::shm {

using Deadline = std::optional<std::chrono::steady_clock::time_point>;

class ShmLink {
 public:
  explicit ShmLink(uint64_t ring_bytes) : ring_bytes_(ring_bytes) {}
  virtual ~ShmLink() = default;

  // The mapped segment; valid for the link's life.
  virtual SegmentHeader* header() const = 0;
  // Bytes mapped at header(): the rings and the arena after them.
  virtual uint64_t mapped_bytes() const = 0;
  // Bytes of each ring, as this side decided or validated them when the session began. Use this,
  // never header()->ring_bytes: the peer can rewrite the header while the session runs.
  uint64_t ring_bytes() const { return ring_bytes_; }
  // kServerSide or kClientSide.
  virtual int side() const = 0;

  // Wakes whoever sleeps on ring `r` (the peer, as reader or writer of that ring). Never blocks.
  // Called only after the peer's waiting word on `r` was seen set.
  virtual void ring(int r) = 0;
  // Whether ring() wakes a sleeper at once. Without a doorbell a sleep is timed and lasts at
  // least its first interval, so the connection keeps its whole spin rather than learning to
  // spin less (spin_budget.h).
  virtual bool has_doorbell() const = 0;
  // Sleeps a while for ring `r` after this side set its waiting word and found nothing to do:
  // until the doorbell rings, the peer goes, `deadline` passes, or a mode-specific bound. Spurious
  // returns are allowed; the caller re-checks. `round` counts sleeps in this wait, from 0. A
  // sleep must not outlast a gone peer by much (every sleep is timed): the caller asks
  // peer_gone() only after the first one.
  virtual void sleep(int r, const Deadline& deadline, int round) = 0;
  // True when the peer is gone: closed, killed, or its session was reset.
  virtual bool peer_gone() = 0;
  // This side ends the session: the peer and every local sleeper notice promptly. Idempotent.
  virtual void shutdown() = 0;
  // Called on every send()/recv(): a link whose liveness needs a thread in the process that uses
  // it starts one there (the daemon accepts in one process and serves in a forked child).
  virtual void on_use() {}

  virtual std::string peer_name() const = 0;

  // The waiting word this side sets before it sleeps on ring `r`, and the one the peer sets: the
  // reader's word on the ring it reads, the writer's on the ring it writes.
  std::atomic<uint32_t>& own_waiting(int r) const { return waiting_word(r, reads(r)); }
  std::atomic<uint32_t>& peer_waiting(int r) const { return waiting_word(r, !reads(r)); }

 private:
  bool reads(int r) const { return (side() == kServerSide) == (r == kClientToServer); }
  std::atomic<uint32_t>& waiting_word(int r, bool reader) const {
    RingControl& c = header()->rings[r];
    return reader ? c.reader_waiting : c.writer_waiting;
  }

  const uint64_t ring_bytes_;
};

}  // namespace gvirtus::shm

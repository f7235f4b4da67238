// The shared segment of the shm communicator: a header, two byte rings, then the arena.
//
//   [SegmentHeader: 4 KiB][ring 0 data: client -> server][ring 1 data: server -> client][arena]
//
// The arena is memory both sides map that the rings never touch: the client places bulk data
// there (cudaMallocHost memory) and passes offsets, so that data needs no trip through a ring
// (Connection::shared_memory()). It is whatever the segment holds beyond the rings, in whole pages;
// in socket mode the backend sizes it (arena_bytes), in file mode the file's size decides.
//
// Each ring is single-producer/single-consumer. `head` counts every byte the producer has
// published, `tail` every byte the consumer has released; both only grow (64-bit, so they never
// wrap in practice), the ring position is `counter % ring_bytes`. Producer-written and
// consumer-written words sit on separate cache lines so that the two sides never write the same
// line. A side about to sleep sets its `*_waiting` word first; the other side checks it after
// publishing and rings the doorbell only then (seq_cst store/fence/load on both sides: no lost
// wakeup, no syscall while both sides spin).
//
// The same layout serves both rendezvous modes. In socket mode the segment is a sealed memfd that
// only the two processes map; in file mode it is a file that QEMU's ivshmem device also maps into
// a guest, so the header carries the session protocol and heartbeats too. All words are native
// (little-endian) atomics: both sides run on the same machine.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gvirtus::shm {

inline constexpr uint64_t kMagic = 0x4d48535355524956ull;  // "VIRUSSHM" in memory order
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kCacheLine = 64;
inline constexpr size_t kHeaderBytes = 4096;  // the rings start page-aligned
inline constexpr uint64_t kMinRingBytes = 4096;
inline constexpr uint64_t kMaxRingBytes = uint64_t{1} << 30;

// Ring 0 carries client -> server, ring 1 server -> client.
inline constexpr int kClientToServer = 0;
inline constexpr int kServerToClient = 1;
// Sides, for the per-side words of the header.
inline constexpr int kServerSide = 0;
inline constexpr int kClientSide = 1;

// File-mode session states (SegmentHeader::state).
enum SessionState : uint32_t {
  kOffline = 0,    // no listener serves this segment
  kListening = 1,  // the listener initialised it and waits for a client
  kClaimed = 2,    // a client claimed it; the listener has not accepted yet
  kConnected = 3,  // a session runs
  kResetting = 4,  // the listener is rewriting the header; clients wait
};

struct alignas(kCacheLine) RingControl {
  alignas(kCacheLine) std::atomic<uint64_t> head;  // producer's line
  std::atomic<uint32_t> writer_waiting;            // producer sleeps for space
  alignas(kCacheLine) std::atomic<uint64_t> tail;  // consumer's line
  std::atomic<uint32_t> reader_waiting;            // consumer sleeps for data
};

struct alignas(kCacheLine) SegmentHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t header_bytes;
  uint64_t ring_bytes;  // bytes of each ring's data area
  // File mode only: the session protocol and liveness (socket mode has the Unix socket for that).
  alignas(kCacheLine) std::atomic<uint32_t> state;         // SessionState
  std::atomic<uint32_t> generation;                        // bumped at every reset by the listener
  std::atomic<uint64_t> listener_heartbeat;                // bumped by the listener's watcher
  alignas(kCacheLine) std::atomic<uint64_t> heartbeat[2];  // per side, bumped while it lives
  std::atomic<uint32_t> closed[2];                         // per side: it ended the session
  RingControl rings[2];
};

static_assert(sizeof(SegmentHeader) <= kHeaderBytes, "the header must fit before the rings");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be lock-free");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared atomics must be lock-free");
static_assert(kMinRingBytes >= 8 * 64, "a ring must hold several headers");

inline constexpr uint64_t segment_bytes(uint64_t ring_bytes) {
  return kHeaderBytes + 2 * ring_bytes;
}

inline constexpr uint64_t kArenaAlign = 4096;
// The most arena a segment may carry (it is sparse: only pages in use take memory).
inline constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 40;

// The arena's bytes in a mapping of `mapped_bytes` with rings of `ring_bytes`.
inline constexpr uint64_t arena_bytes(uint64_t mapped_bytes, uint64_t ring_bytes) {
  const uint64_t rings = segment_bytes(ring_bytes);
  return mapped_bytes > rings ? (mapped_bytes - rings) / kArenaAlign * kArenaAlign : 0;
}

// The data area of ring `r` in a segment mapped at `base` with rings of `ring_bytes`. The size
// comes from the caller's own validated copy, never from the header: the peer can rewrite the
// header at any time.
inline std::byte* ring_data(void* base, uint64_t ring_bytes, int r) {
  return static_cast<std::byte*>(base) + kHeaderBytes + static_cast<size_t>(r) * ring_bytes;
}

// A ring size both sides accept: a power of two (positions are counter & (size - 1)) from
// kMinRingBytes to kMaxRingBytes.
inline constexpr bool valid_ring_bytes(uint64_t bytes) {
  return bytes >= kMinRingBytes && bytes <= kMaxRingBytes && (bytes & (bytes - 1)) == 0;
}

// Writes a fresh header for rings of `ring_bytes` (the creator's side of both modes); the state
// words are left for the caller.
void init_header(void* base, uint64_t ring_bytes);

// File mode: makes an initialised segment ready for the next client (rings empty, per-side words
// cleared, generation bumped, state kListening last, with release order).
void reset_session(SegmentHeader* header, uint64_t ring_bytes);

// Checks a mapped segment of `mapped_bytes` that the other side initialised and returns its ring
// size, read once: the caller keeps that copy. Throws Error{kInvalidInput} naming `what` if the
// header is not one this build understands.
uint64_t validate_header(const void* base, uint64_t mapped_bytes, std::string_view what);

}  // namespace gvirtus::shm

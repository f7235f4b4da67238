// The shm communicator's endpoint fields, read and checked once (docs/shm.md lists them).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gvirtus {
class EndpointConfig;
}

namespace gvirtus::shm {

struct ShmOptions {
  // Socket mode: the Unix socket path; "@name" is the abstract namespace.
  std::string path = "/tmp/gvirtus-shm.sock";
  // File mode when not empty: the shared file (host) or the ivshmem BAR file (guest).
  std::string file;
  // Bytes of each direction's ring (a power of two). 4 MiB holds a few 1 MiB messages in flight
  // so sender and receiver overlap, and keeps a session's segment at 8 MiB (64 sessions: 512 MiB).
  uint64_t ring_bytes = uint64_t{4} << 20;
  // Socket mode: bytes of each session's arena, the shared memory where the client places
  // page-locked host memory (cudaMallocHost) so that copies need no trip through a ring. Sparse:
  // only what the client allocates takes memory. 0 turns the arena off.
  uint64_t arena_bytes = uint64_t{4} << 30;
  // The longest a waiting side spins before it sleeps: a round trip answered within the spin
  // costs no system call. Each connection spins less while spinning does not pay (spin_budget.h).
  std::chrono::microseconds spin{50};
  // File mode: a peer whose heartbeat stops this long is dead.
  std::chrono::milliseconds dead_after{3000};

  bool file_mode() const { return !file.empty(); }
};

// Reads the shm fields of `endpoint`; a bad value throws Error{kInvalidInput} naming the field.
ShmOptions read_shm_options(const EndpointConfig& endpoint);

}  // namespace gvirtus::shm

// The core Status call: what a backend reports to operators (gvirtus-smi).
//
// A status query is an ordinary session that opens no plugin but core, so its worker never
// initialises CUDA. The reply describes the backend's GPUs (from NVML, when the driver provides
// it) and every client session the daemon serves, read from the shared session table the workers
// publish into (backend/session_table.h) - but monitors': a session that asked for the status is
// never listed, neither to itself nor to later queries. Unknown figures travel as kUnknown, never
// as zero.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/wire.h"

namespace gvirtus {

struct GpuStatus {
  static constexpr uint64_t kUnknown = UINT64_MAX;
  uint32_t index = 0;
  std::string name;
  std::string bus_id;
  uint64_t memory_used_bytes = kUnknown;
  uint64_t memory_total_bytes = kUnknown;
  uint64_t utilization_percent = kUnknown;  // GPU busy share over the driver's last sample
};

struct SessionStatus {
  static constexpr uint64_t kUnknown = UINT64_MAX;
  uint32_t worker_pid = 0;
  std::string peer;       // "tcp://127.0.0.1:40112"
  std::string transport;  // "tcp"
  std::string program;    // the client's program name, from its handshake
  std::string plugins;    // the plugins open in the session, comma-separated ("cudart,cuda")
  uint32_t client_pid = 0;
  uint64_t started_unix_s = 0;
  uint64_t calls = 0;                       // requests served (synchronous and asynchronous)
  uint64_t bytes_in = 0;                    // request bytes received, headers included
  uint64_t bytes_out = 0;                   // reply bytes sent, headers included
  uint64_t allocated_bytes = 0;             // device memory the session's application has allocated
  uint64_t device_memory_bytes = kUnknown;  // device memory the worker holds (NVML), all GPUs:
                                            // the allocations plus the CUDA context
};

struct BackendStatus {
  std::string backend_version;
  uint32_t daemon_pid = 0;
  uint64_t started_unix_s = 0;
  uint32_t max_sessions = 0;
  // Why GPUs could not be listed ("NVML is not available: ..."); empty when they were.
  std::string gpu_error;
  std::vector<GpuStatus> gpus;
  std::vector<SessionStatus> sessions;
};

// Bounds the decoder enforces; the backend never sends more.
inline constexpr size_t kMaxStatusGpus = 64;
inline constexpr size_t kMaxStatusSessions = 4096;
inline constexpr size_t kMaxStatusString = 1024;

void encode(const BackendStatus& status, WireWriter& out);
// Throws Error{kInvalidInput} on a malformed or oversized reply.
BackendStatus decode_backend_status(WireReader& in);

}  // namespace gvirtus

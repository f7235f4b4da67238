// What the backend reports about itself (protocol/status.h): its GPUs, read through NVML, and the
// sessions its workers published in the session table. Status queries (gvirtus-smi) and the
// metrics server (backend/metrics_server.h) both read it here.
//
// Blocking (NVML queries, milliseconds); never initialises CUDA. Never throws.
#pragma once

#include <sys/types.h>

#include "protocol/status.h"

namespace gvirtus {

// The backend's status, every session but the one of the process `leave_out` (a status query's
// own session; 0 leaves none out). In a process with no session table (tests that run a session
// directly) the status lists GPUs only.
BackendStatus read_backend_status(pid_t leave_out);

}  // namespace gvirtus

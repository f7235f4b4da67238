#include "backend/backend_status.h"

#include <unistd.h>

#include "backend/gpu_inventory.h"
#include "backend/session_table.h"

namespace gvirtus {

BackendStatus read_backend_status(pid_t leave_out) {
  BackendStatus status;
  status.backend_version = "gvirtus-backend " GVIRTUS_VERSION;
  GpuInventory gpus = read_gpu_inventory();
  status.gpu_error = std::move(gpus.error);
  status.gpus = std::move(gpus.gpus);
  const SessionTable* table = current_session_table();
  if (table == nullptr) {
    status.daemon_pid = static_cast<uint32_t>(::getppid());
    return status;  // a session run outside a daemon (tests): no other sessions to show
  }
  status.daemon_pid = static_cast<uint32_t>(table->daemon_pid());
  status.started_unix_s = table->started_unix_s();
  status.max_sessions = table->max_sessions();
  for (SessionStatus& s : table->snapshot()) {
    if (leave_out != 0 && s.worker_pid == static_cast<uint32_t>(leave_out)) continue;
    if (const auto it = gpus.memory_by_pid.find(static_cast<pid_t>(s.worker_pid));
        it != gpus.memory_by_pid.end()) {
      s.device_memory_bytes = it->second;
    } else if (status.gpu_error.empty()) {
      s.device_memory_bytes = 0;  // NVML works and lists no memory for this worker
    }
    status.sessions.push_back(std::move(s));
  }
  return status;
}

}  // namespace gvirtus

#include "protocol/status.h"

#include "common/error.h"

namespace gvirtus {
namespace {

std::string get_bounded_string(WireReader& in) {
  return std::string(in.get_string(kMaxStatusString));
}

uint32_t get_count(WireReader& in, size_t max, const char* what) {
  const uint32_t count = in.get<uint32_t>();
  if (count > max) {
    raise(ErrorKind::kInvalidInput, std::string("status: ") + std::to_string(count) + " " + what +
                                        " exceed the limit of " + std::to_string(max));
  }
  return count;
}

}  // namespace

void encode(const BackendStatus& status, WireWriter& out) {
  out.put_string(status.backend_version);
  out.put<uint32_t>(status.daemon_pid);
  out.put<uint64_t>(status.started_unix_s);
  out.put<uint32_t>(status.max_sessions);
  out.put_string(status.gpu_error);
  out.put<uint32_t>(static_cast<uint32_t>(status.gpus.size()));
  for (const GpuStatus& g : status.gpus) {
    out.put<uint32_t>(g.index);
    out.put_string(g.name);
    out.put_string(g.bus_id);
    out.put<uint64_t>(g.memory_used_bytes);
    out.put<uint64_t>(g.memory_total_bytes);
    out.put<uint64_t>(g.utilization_percent);
  }
  out.put<uint32_t>(static_cast<uint32_t>(status.sessions.size()));
  for (const SessionStatus& s : status.sessions) {
    out.put<uint32_t>(s.worker_pid);
    out.put_string(s.peer);
    out.put_string(s.transport);
    out.put_string(s.program);
    out.put_string(s.plugins);
    out.put<uint32_t>(s.client_pid);
    out.put<uint64_t>(s.started_unix_s);
    out.put<uint64_t>(s.calls);
    out.put<uint64_t>(s.bytes_in);
    out.put<uint64_t>(s.bytes_out);
    out.put<uint64_t>(s.allocated_bytes);
    out.put<uint64_t>(s.device_memory_bytes);
  }
}

BackendStatus decode_backend_status(WireReader& in) {
  BackendStatus status;
  status.backend_version = get_bounded_string(in);
  status.daemon_pid = in.get<uint32_t>();
  status.started_unix_s = in.get<uint64_t>();
  status.max_sessions = in.get<uint32_t>();
  status.gpu_error = get_bounded_string(in);
  const uint32_t gpus = get_count(in, kMaxStatusGpus, "GPUs");
  for (uint32_t i = 0; i < gpus; ++i) {
    GpuStatus g;
    g.index = in.get<uint32_t>();
    g.name = get_bounded_string(in);
    g.bus_id = get_bounded_string(in);
    g.memory_used_bytes = in.get<uint64_t>();
    g.memory_total_bytes = in.get<uint64_t>();
    g.utilization_percent = in.get<uint64_t>();
    status.gpus.push_back(std::move(g));
  }
  const uint32_t sessions = get_count(in, kMaxStatusSessions, "sessions");
  for (uint32_t i = 0; i < sessions; ++i) {
    SessionStatus s;
    s.worker_pid = in.get<uint32_t>();
    s.peer = get_bounded_string(in);
    s.transport = get_bounded_string(in);
    s.program = get_bounded_string(in);
    s.plugins = get_bounded_string(in);
    s.client_pid = in.get<uint32_t>();
    s.started_unix_s = in.get<uint64_t>();
    s.calls = in.get<uint64_t>();
    s.bytes_in = in.get<uint64_t>();
    s.bytes_out = in.get<uint64_t>();
    s.allocated_bytes = in.get<uint64_t>();
    s.device_memory_bytes = in.get<uint64_t>();
    status.sessions.push_back(std::move(s));
  }
  in.expect_end();
  return status;
}

}  // namespace gvirtus

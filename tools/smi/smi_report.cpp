#include "smi/smi_report.h"

#include "bench/json_out.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

namespace gvirtus::smi {
namespace {

// A table with a header row, each column as wide as its widest cell; numbers right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header, std::vector<bool> right_aligned)
      : rows_{std::move(header)}, right_(std::move(right_aligned)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string render() const {
    std::vector<size_t> width(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    std::string rule = "+";
    std::string header_rule = "|";
    for (size_t w : width) {
      rule += std::string(w + 2, '-') + "+";
      header_rule += std::string(w + 2, '=') + "|";
    }
    std::string out = rule + "\n";
    for (size_t r = 0; r < rows_.size(); ++r) {
      out += "|";
      for (size_t c = 0; c < width.size(); ++c) {
        const std::string& cell = rows_[r][c];
        const std::string pad(width[c] - cell.size(), ' ');
        out += " " + (right_[c] && r > 0 ? pad + cell : cell + pad) + " |";
      }
      out += "\n";
      if (r == 0) out += header_rule + "\n";
    }
    return out + rule + "\n";
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> right_;
};

std::string count_or_na(uint64_t value, const char* unit) {
  return value == GpuStatus::kUnknown ? "N/A" : std::to_string(value) + unit;
}

std::string bytes_human(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f%s" : "%.1f%s", value, units[unit]);
  return text;
}

}  // namespace

std::string mebibytes(uint64_t bytes) {
  if (bytes == GpuStatus::kUnknown) return "N/A";
  return std::to_string(bytes >> 20) + "MiB";
}

std::string duration(uint64_t seconds) {
  char text[48];
  const uint64_t days = seconds / 86400;
  const unsigned h = static_cast<unsigned>(seconds % 86400 / 3600);
  const unsigned m = static_cast<unsigned>(seconds % 3600 / 60);
  const unsigned s = static_cast<unsigned>(seconds % 60);
  if (days > 0) {
    std::snprintf(text, sizeof text, "%llud %u:%02u:%02u", static_cast<unsigned long long>(days), h,
                  m, s);
  } else {
    std::snprintf(text, sizeof text, "%u:%02u:%02u", h, m, s);
  }
  return text;
}

void assign_pool_devices(std::vector<BackendResult>& results) {
  std::vector<std::string> counted;
  uint32_t next = 0;
  for (BackendResult& r : results) {
    if (r.pool_backend.empty() || !r.status) continue;
    if (std::find(counted.begin(), counted.end(), r.pool_backend) != counted.end()) continue;
    counted.push_back(r.pool_backend);
    const auto count = static_cast<uint32_t>(r.status->gpus.size());
    r.pool_devices = BackendResult::PoolDevices{next, count};
    next += count;
  }
}

std::string pool_line(const BackendResult& r) {
  if (!r.pool_devices) return "";
  const auto& d = *r.pool_devices;
  std::string line = "Pool: backend \"" + r.pool_backend + "\", ";
  if (d.count == 0) return line + "no device of the pool\n";
  if (d.count == 1) return line + "device " + std::to_string(d.first) + " of the pool\n";
  return line + "devices " + std::to_string(d.first) + "-" + std::to_string(d.first + d.count - 1) +
         " of the pool\n";
}

std::string format_backend(const std::string& endpoint, const BackendStatus& status,
                           uint64_t now_unix_s, const std::string& pool) {
  std::ostringstream out;
  const uint64_t up = now_unix_s > status.started_unix_s && status.started_unix_s != 0
                          ? now_unix_s - status.started_unix_s
                          : 0;
  out << "Backend " << endpoint << ": " << status.backend_version << ", pid " << status.daemon_pid
      << ", up " << duration(up) << ", " << status.sessions.size() << " of " << status.max_sessions
      << " sessions\n"
      << pool;

  if (status.gpus.empty()) {
    out << "GPUs: 0";
    if (!status.gpu_error.empty()) out << " (" << status.gpu_error << ")";
    out << "\n";
  } else {
    Table gpus({"GPU", "Name", "Bus-Id", "Memory-Usage", "GPU-Util"},
               {true, false, false, true, true});
    for (const GpuStatus& g : status.gpus) {
      gpus.add({std::to_string(g.index), g.name, g.bus_id.empty() ? "N/A" : g.bus_id,
                mebibytes(g.memory_used_bytes) + " / " + mebibytes(g.memory_total_bytes),
                count_or_na(g.utilization_percent, "%")});
    }
    out << gpus.render();
  }

  if (status.sessions.empty()) {
    out << "Sessions: none\n";
    return out.str();
  }
  Table sessions({"Worker", "Client", "Transport", "Program", "PID", "Calls", "Received", "Sent",
                  "Allocated", "GPU-Memory", "Age"},
                 {true, false, false, false, true, true, true, true, true, true, true});
  for (const SessionStatus& s : status.sessions) {
    const uint64_t age = now_unix_s > s.started_unix_s ? now_unix_s - s.started_unix_s : 0;
    sessions.add({std::to_string(s.worker_pid), s.peer, s.transport, s.program,
                  std::to_string(s.client_pid), std::to_string(s.calls), bytes_human(s.bytes_in),
                  bytes_human(s.bytes_out), bytes_human(s.allocated_bytes),
                  mebibytes(s.device_memory_bytes), duration(age)});
  }
  out << sessions.render();
  return out.str();
}

std::string format_unreachable(const std::string& endpoint, const std::string& state,
                               const std::string& why) {
  return "Backend " + endpoint + ": " + state + ": " + why + "\n";
}

namespace {

void figure(bench::JsonWriter& out, const char* key, uint64_t value) {
  out.key(key);
  if (value == GpuStatus::kUnknown) {
    out.null();
  } else {
    out.value(value);
  }
}

}  // namespace

std::string format_json(const std::string& config_path, const std::vector<BackendResult>& results) {
  bench::JsonWriter out;
  out.begin_object().key("config").value(config_path).key("backends").begin_array();
  for (const BackendResult& r : results) {
    out.begin_object()
        .key("endpoint")
        .value(r.endpoint)
        .key("answered")
        .value(r.status.has_value());
    if (!r.pool_backend.empty()) {
      out.key("pool_backend").value(r.pool_backend).key("pool_devices");
      if (r.pool_devices) {
        out.begin_object(bench::JsonWriter::kInline)
            .key("first")
            .value(uint64_t{r.pool_devices->first})
            .key("count")
            .value(uint64_t{r.pool_devices->count})
            .end_object();
      } else {
        out.null();
      }
    }
    if (!r.status) {
      out.key("state").value(r.state).key("error").value(r.why).end_object();
      continue;
    }
    const BackendStatus& s = *r.status;
    out.key("backend_version").value(s.backend_version);
    out.key("daemon_pid").value(uint64_t{s.daemon_pid});
    out.key("started_unix_s").value(s.started_unix_s);
    out.key("max_sessions").value(uint64_t{s.max_sessions});
    out.key("gpu_error");
    if (s.gpu_error.empty()) {
      out.null();
    } else {
      out.value(s.gpu_error);
    }
    out.key("gpus").begin_array();
    for (const GpuStatus& g : s.gpus) {
      out.begin_object(bench::JsonWriter::kInline).key("index").value(uint64_t{g.index});
      out.key("name").value(g.name).key("bus_id").value(g.bus_id);
      figure(out, "memory_used_bytes", g.memory_used_bytes);
      figure(out, "memory_total_bytes", g.memory_total_bytes);
      figure(out, "utilization_percent", g.utilization_percent);
      out.end_object();
    }
    out.end_array().key("sessions").begin_array();
    for (const SessionStatus& x : s.sessions) {
      out.begin_object(bench::JsonWriter::kInline).key("worker_pid").value(uint64_t{x.worker_pid});
      out.key("peer").value(x.peer).key("transport").value(x.transport);
      out.key("program").value(x.program).key("client_pid").value(uint64_t{x.client_pid});
      out.key("plugins").value(x.plugins);
      out.key("started_unix_s").value(x.started_unix_s).key("calls").value(x.calls);
      out.key("bytes_in").value(x.bytes_in).key("bytes_out").value(x.bytes_out);
      out.key("allocated_bytes").value(x.allocated_bytes);
      figure(out, "device_memory_bytes", x.device_memory_bytes);
      out.end_object();
    }
    out.end_array().end_object();
  }
  out.end_array().end_object();
  return out.str();
}

}  // namespace gvirtus::smi

// gvirtus-smi's output: one block per configured backend, with its GPUs and sessions in tables
// shaped like nvidia-smi's. Pure formatting (no I/O), so tests can check it from a status value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/status.h"

namespace gvirtus::smi {

// The block for a backend that answered. `endpoint` names it ("tcp 127.0.0.1:9999");
// `now_unix_s` dates session ages and the backend's uptime.
std::string format_backend(const std::string& endpoint, const BackendStatus& status,
                           uint64_t now_unix_s);

// The block for a backend that could not be asked: `state` is "UNREACHABLE" (no connection) or
// "REFUSED" (it answered with an error, e.g. all its sessions are busy), then the reason.
std::string format_unreachable(const std::string& endpoint, const std::string& state,
                               const std::string& why);

// What asking one endpoint gave: its status, or why there is none.
struct BackendResult {
  std::string endpoint;                 // "tcp 127.0.0.1:9999"
  std::optional<BackendStatus> status;  // set when the backend answered
  std::string state;                    // when it did not: "UNREACHABLE" or "REFUSED"
  std::string why;
};

// The same as a JSON document for scripts and monitoring (gvirtus-smi --json): figures in bytes
// and seconds, unknown ones as null.
std::string format_json(const std::string& config_path, const std::vector<BackendResult>& results);

// "1024MiB", or "N/A" for an unknown figure.
std::string mebibytes(uint64_t bytes);
// "3d 4:05:06" / "4:05:06".
std::string duration(uint64_t seconds);

}  // namespace gvirtus::smi

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
// `now_unix_s` dates session ages and the backend's uptime; `pool`, when not empty, is a line
// saying where its GPUs are in a client's pool (pool_line).
std::string format_backend(const std::string& endpoint, const BackendStatus& status,
                           uint64_t now_unix_s, const std::string& pool = "");

// The block for a backend that could not be asked: `state` is "UNREACHABLE" (no connection) or
// "REFUSED" (it answered with an error, e.g. all its sessions are busy), then the reason.
std::string format_unreachable(const std::string& endpoint, const std::string& state,
                               const std::string& why);

// What asking one endpoint gave: its status, or why there is none.
struct BackendResult {
  std::string endpoint{};                 // "tcp 127.0.0.1:9999"
  std::optional<BackendStatus> status{};  // set when the backend answered
  std::string state{};                    // when it did not: "UNREACHABLE" or "REFUSED"
  std::string why{};
  // In a client's pool (a configuration whose endpoints name their "backend"): the backend's
  // name, and where its GPUs are in the pool's device list (assign_pool_devices).
  std::string pool_backend{};
  struct PoolDevices {
    uint32_t first;
    uint32_t count;
  };
  std::optional<PoolDevices> pool_devices{};
};

// The pool's device ordinals of each backend, as the client's libcuda.so.1 numbers them: the
// backends in the order they first appear, each one's GPUs after those before it; a backend is
// the first of its endpoints that answered, and one that none answered adds no device (as at a
// client's cuInit). Results without a pool backend are left alone.
void assign_pool_devices(std::vector<BackendResult>& results);

// "Pool: backend \"a\", devices 2-3 of the pool" (or "no device of the pool"); "" outside a
// pool or for an endpoint that is not its backend's answer.
std::string pool_line(const BackendResult& result);

// The same as a JSON document for scripts and monitoring (gvirtus-smi --json): figures in bytes
// and seconds, unknown ones as null.
std::string format_json(const std::string& config_path, const std::vector<BackendResult>& results);

// "1024MiB", or "N/A" for an unknown figure.
std::string mebibytes(uint64_t bytes);
// "3d 4:05:06" / "4:05:06".
std::string duration(uint64_t seconds);

}  // namespace gvirtus::smi

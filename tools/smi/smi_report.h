// gvirtus-smi's output: one block per configured backend, with its GPUs and sessions in tables
// shaped like nvidia-smi's. Pure formatting (no I/O), so tests can check it from a status value.
#pragma once

#include <cstdint>
#include <string>

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

// "1024MiB", or "N/A" for an unknown figure.
std::string mebibytes(uint64_t bytes);
// "3d 4:05:06" / "4:05:06".
std::string duration(uint64_t seconds);

}  // namespace gvirtus::smi

// What the backend's GPUs look like now, for status queries: read through NVML, the driver's
// management library (libnvidia-ml.so.1, the one nvidia-smi uses), opened with dlopen() so the
// backend still starts and answers on a machine with no driver — it then reports no GPUs and why.
//
// NVML reads driver state without creating a CUDA context, so a status query costs no GPU memory
// and never disturbs running sessions. Blocking: a few driver queries per GPU (milliseconds).
// Called in a short-lived worker process, never in the daemon.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "protocol/status.h"

namespace gvirtus {

struct GpuInventory {
  std::string error;  // why the GPUs could not be listed; empty when they were
  std::vector<GpuStatus> gpus;
  // Device memory each process holds, summed over all GPUs (NVML's per-process figure).
  std::map<pid_t, uint64_t> memory_by_pid;
};

// Never throws: every failure ends up in `error`.
GpuInventory read_gpu_inventory();

}  // namespace gvirtus

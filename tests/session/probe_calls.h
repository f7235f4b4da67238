// The probe plugin's call table: a plugin of the tests' own, with a backend side
// (libgvirtus-plugin-probe.so) and a stub library (libgvirtus-probe.so), for tests of how stub
// libraries share the process's session (sharing_test.cpp).
//   WorkerPid - the pid of the worker process serving the session.
//   Echo      - returns its payload.
#pragma once

#include "common/frame.h"
#include "protocol/call_table.h"

#define GVIRTUS_PROBE_CALLS(X)        \
  X(WorkerPid, 0, sync, "-> u32 pid") \
  X(Echo, 1, sync, "raw -> same raw")

namespace gvirtus::probe {

// The interface version both sides speak: a client asking for another is refused.
inline constexpr uint32_t kVersion = 1;

GVIRTUS_DEFINE_CALL_TABLE(GVIRTUS_PROBE_CALLS, 100, "probe", kVersion)

}  // namespace gvirtus::probe

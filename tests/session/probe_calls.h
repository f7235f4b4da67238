// The probe plugin's call table: a plugin of the tests' own, with a backend side
// (libgvirtus-plugin-probe.so) and a stub library (libgvirtus-probe.so), for tests of how stub
// libraries share the process's session (sharing_test.cpp).
//   WorkerPid - the pid of the worker process serving the session.
//   Echo      - returns its payload.
//   Print     - prints its bytes to the worker's stdout (stream 1) or stderr (2) while it runs,
//               through stdio left unflushed (unflushed 1) or with write(2) (0), as the CUDA
//               driver prints the device's output (output_relay_test.cpp).
//   PrintAhead - the same in an asynchronous call, through write(2): output of a call the
//               client did not wait for.
//   Quiet      - prints nothing, and the plugin says so (BackendPlugin::quiet), as of a query.
//   PrintQuiet - Print, though the plugin says it prints nothing: what a quiet call prints.
#pragma once

#include "common/frame.h"
#include "protocol/call_table.h"

#define GVIRTUS_PROBE_CALLS(X)                            \
  X(WorkerPid, 0, sync, "-> u32 pid")                     \
  X(Echo, 1, sync, "raw -> same raw")                     \
  X(Print, 2, sync, "u8 stream, u8 unflushed, raw bytes") \
  X(PrintAhead, 3, async, "u8 stream, raw bytes")         \
  X(Quiet, 4, sync, "")                                   \
  X(PrintQuiet, 5, sync, "u8 stream, u8 unflushed, raw bytes")

namespace gvirtus::probe {

// The interface version both sides speak: a client asking for another is refused.
inline constexpr uint32_t kVersion = 1;

GVIRTUS_DEFINE_CALL_TABLE(GVIRTUS_PROBE_CALLS, 100, "probe", kVersion)

}  // namespace gvirtus::probe

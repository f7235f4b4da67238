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

inline constexpr uint16_t kPluginId = 100;
// The interface version both sides speak: a client asking for another is refused.
inline constexpr uint32_t kVersion = 1;

enum class Fn : uint16_t { GVIRTUS_PROBE_CALLS(GVIRTUS_CALL_ENUMERATOR) kCount };

inline constexpr PluginIdentity kIdentity{
    kPluginId, "probe", fnv1a64(GVIRTUS_PROBE_CALLS(GVIRTUS_CALL_SIGNATURE)), kVersion};

constexpr uint32_t call_id(Fn fn) {
  return make_call_id(kPluginId, static_cast<uint16_t>(fn));
}

}  // namespace gvirtus::probe

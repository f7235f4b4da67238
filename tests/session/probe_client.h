// What the tests ask the probe plugin (probe_calls.h) through a Client of their own.
#pragma once

#include <cstdint>

#include "common/wire.h"
#include "frontend/client.h"
#include "session/probe_calls.h"

namespace gvirtus::testing {

// The pid of the backend worker that serves `client`'s session.
inline uint32_t worker_pid(Client& client) {
  uint32_t pid = 0;
  client.call(probe::call_id(probe::Fn::kWorkerPid), {}, [&](WireReader& in) {
    pid = in.get<uint32_t>();
    in.expect_end();
  });
  return pid;
}

}  // namespace gvirtus::testing

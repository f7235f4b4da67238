// The driver's error log and a device's asynchronous notifications on the backend (cuda rows
// 297-303; wire: src/common/log_dump_wire.h): callbacks relayed to the client through the plugin's
// notification relay (services/notification_relay.h), dumps to memory bounded by the driver's own
// buffer. A device notification's registration is the driver's with a callback of the plugin's,
// whose data is the registration's gate; its handle is the gate's address.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

// Runs `fn` if it is one of the log rows (the reply written, `result` set); false otherwise.
bool run_logs(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

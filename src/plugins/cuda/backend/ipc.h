// The cuda plugin's IPC memory calls (custom rows of cuda_calls.txt; wire: common/driver_wire.h).
// Another application's allocation, opened by this session, is device memory of the session for
// every other call (the allocation ledger's, owned by the opening: not counted as the
// application's own memory) until this session closes it; the session closes only what it opened.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

// Runs `fn` if it is one of these calls (the reply written, `result` set); false otherwise.
bool run_ipc(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

// A reset of a device unmapped what the session opened: forgotten (the driver's mappings went
// with the context).
void forget_ipc();

}  // namespace gvirtus::cuda

// The cudart backend's IPC memory calls (custom rows 184-185 of cudart_calls.txt).
//
// Wire: cudaIpcOpenMemHandle's request is the handle's bytes (cudaIpcMemHandle_t) and u32 flags;
// its reply i32 result, u64 device pointer, u64 bytes of the opened allocation (both 0 after a
// failure). cudaIpcCloseMemHandle's request is the u64 pointer; its reply the result.
#pragma once

#include <cuda_runtime_api.h>

#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

// Runs `fn` if it is one of these calls; false otherwise.
bool run_ipc(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// A reset of the current device unmapped what the session opened on it.
void forget_ipc();

}  // namespace gvirtus::cudart

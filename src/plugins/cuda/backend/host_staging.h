// The cuda plugin's staging rows (gvirtusStagingAlloc, gvirtusStagingWrite, gvirtusStagingRead:
// rows 331-333; the wire and the blocks: backend/services/staging_blocks.h), over the driver's
// page registration.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

// The three rows; false if `fn` is none of them.
bool run_host_staging(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

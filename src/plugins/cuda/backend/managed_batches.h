// Batches of managed memory prefetches and discards on the backend (cuda rows 285-287; wire:
// src/common/managed_batch_wire.h): the stream must be the session's and every range lie in the
// session's device memory before the driver sees the batch, which judges the rest (managed
// memory or not, the flags, the locations and their indexes). A batch over its limits or its own
// length is malformed.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

// Runs `fn` if it is one of the three batches (the reply written, `result` set); false otherwise.
bool run_managed_batch(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

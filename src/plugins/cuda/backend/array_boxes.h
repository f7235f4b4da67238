// The cuda plugin's handler of copies with a CUDA array on either side (array_boxes.cpp; wire:
// common/driver_wire.h's ArrayBoxRequest), called by run_custom: true when `fn` is one of them
// (the reply written and `result` set), false otherwise.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_array_box(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

// The cuda plugin's handler of the 2D copies (copies_2d.cpp), called by run_custom: true when
// `fn` is one of them (the reply written and `result` set), false otherwise.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_copy_2d(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

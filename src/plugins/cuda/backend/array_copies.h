// The cuda plugin's handlers of copies between the client's memory and CUDA arrays
// (array_copies.cpp), called by run_custom: true when `fn` is one of them (the reply written and
// `result` set).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_array_copy(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

// The cuda plugin's handlers of the JIT linker's calls (links.cpp), called by run_custom: true
// when `fn` is one of them (the reply written and `result` set).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_link(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

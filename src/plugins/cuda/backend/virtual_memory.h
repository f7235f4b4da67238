// The cuda plugin's handlers of the virtual memory management calls (virtual_memory.cpp), called
// by run_custom: true when `fn` is one of them (the reply written and `result` set).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_virtual_memory(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

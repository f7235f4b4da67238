// The cuda plugin's handlers of module and library enumeration and of function and kernel names
// (module_queries.cpp), called by run_custom: true when `fn` is one of them (the reply written
// and `result` set).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_module_query(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

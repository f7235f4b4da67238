// The cuda plugin's handlers of stream attributes (stream_attributes.cpp), called by run_custom:
// true when `fn` is one of them (the reply written and `result` set).
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_stream_attribute(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda

// The cuda plugin's handler of copies with a CUDA array on either side (array_boxes.cpp; wire:
// common/driver_wire.h's ArrayBoxRequest), called by run_custom: true when `fn` is one of them
// (the reply written and `result` set), false otherwise; and the box of a graph's copy node.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

bool run_array_box(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

// A graph copy node's box (common/graph_node_wire.h): both sides device memory or arrays (a
// host side, or any other kind, is malformed: Error{kInvalidInput}), non-empty, without a stream.
// Each side is vetted as a copy's is - the session's array, or device memory over all the box
// spans - and on success `copy` describes the box for the driver.
CUresult node_box(const ArrayBoxRequest& request, CUDA_MEMCPY3D& copy);

}  // namespace gvirtus::cuda

// The cudart backend's custom array calls: freeing arrays and mipmapped arrays, the arrays a
// parent owns (a mipmapped array's levels, a multi-planar array's planes), and copies between
// arrays and linear memory (wire: common/array_wire.h).
#pragma once

#include <cuda_runtime_api.h>

#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

// Runs `fn` if it is one of these calls; false otherwise.
bool run_array(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// A device reset freed the arrays made on it: forgets the levels and planes whose parent the
// session no longer holds.
void forget_array_children();

}  // namespace gvirtus::cudart

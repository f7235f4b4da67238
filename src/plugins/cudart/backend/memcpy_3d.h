// The cudart backend's 3D copies: cudaMemcpy3D, cudaMemcpy3DAsync and their peer forms (custom
// rows 177-180 of cudart_calls.txt; wire: common/array_wire.h's Memcpy3DRequest).
#pragma once

#include <cuda_runtime_api.h>

#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

// Runs `fn` if it is one of these calls; false otherwise.
bool run_memcpy_3d(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

}  // namespace gvirtus::cudart

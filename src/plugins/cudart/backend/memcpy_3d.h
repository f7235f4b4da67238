// The cudart backend's 3D copies: cudaMemcpy3D, cudaMemcpy3DAsync and their peer forms (custom
// rows 177-180 of cudart_calls.txt; wire: common/array_wire.h's Memcpy3DRequest).
#pragma once

#include <cuda_runtime_api.h>

#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

// Runs `fn` if it is one of these calls; false otherwise.
bool run_memcpy_3d(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// The bytes of one element of a copy's extent along x, as the runtime counts them: the element of
// the array taking part (the source's, else the destination's), or 1 without one - and 1 when the
// runtime cannot size it (not whole bytes, or no answer: it refuses the copy itself). A pointer
// side's position x counts such elements too (frontend/memcpy_3d.cpp).
uint64_t copy_element_bytes(cudaArray_t src, cudaArray_t dst);

}  // namespace gvirtus::cudart

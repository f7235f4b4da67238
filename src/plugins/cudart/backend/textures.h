// The cudart backend's texture and surface objects (custom rows 169-176 of cudart_calls.txt).
//
// Wire: each create request is its descriptors' bytes (cudaCreateTextureObject: u32 whether a
// view descriptor follows, the resource and texture descriptors, then the view's); the reply is
// i32 result, then the u64 object (0 after a failure). Destroy requests are the u64 object; the
// reply is the result. Queries take the u64 object and reply the result, then the descriptor's
// bytes (zeroed after a failure).
#pragma once

#include <cuda_runtime_api.h>

#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

// Runs `fn` if it is one of these calls; false otherwise.
bool run_texture(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// A reset of `device` destroyed the objects made on it.
void forget_textures(int device);

}  // namespace gvirtus::cudart

// The cuda plugin's handlers of texture and surface objects, mipmapped arrays' levels and array
// destruction (textures.cpp), called by run_custom: true when `fn` is one of them (the reply
// written and `result` set), false otherwise. forget_textures(device) is what a reset of the
// device's primary context destroyed: its objects, and the levels of mipmapped arrays gone.
#pragma once

#include <cuda.h>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

bool run_texture(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

void forget_textures(int device);

}  // namespace gvirtus::cuda

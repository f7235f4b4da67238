// Copies with a CUDA array on either side, in the client libcuda.so.1 (array_boxes.cpp; wire:
// common/driver_wire.h's ArrayBoxRequest): cuMemcpy2D's and cuMemcpy3D's, whose array side has
// no address for the stub to slice by. The box travels as it is; a side in the client's memory
// travels as its bytes, packed, a chunk at most a request.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

// Whether either side of the copy is an array.
bool has_array_side(const CUDA_MEMCPY3D& copy);

// The copy, waited for unless `ahead` (an asynchronous copy from the client's memory or between
// device sides is sent ahead; into the client's memory it waits for its bytes). A 2D copy is a
// box one slice deep.
CUresult copy_array_box(const CUDA_MEMCPY3D& copy, CUstream stream, bool asynchronous);

}  // namespace gvirtus::cuda

// A 3D copy of the client libcuda.so.1 (copies_2d.cpp), for the calls made of 3D copies (batches
// of them: batch_copies_3d.cpp): as the 2D copies of its slices, or with an array on either side
// as a box (array_boxes.h). `with_stream`: cuMemcpy3DAsync on `stream`, else cuMemcpy3D.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

CUresult copy_3d(const CUDA_MEMCPY3D* copy, CUstream stream, bool with_stream);

}  // namespace gvirtus::cuda

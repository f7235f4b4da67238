// A 2D copy as the 3D copy of a box one slice deep: how the stub and the simulated device take
// cuMemcpy2D's copies with a CUDA array on either side, which go as boxes (the driver's own
// cuMemcpy3D takes the same).
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

inline CUDA_MEMCPY3D as_box(const CUDA_MEMCPY2D& c) {
  CUDA_MEMCPY3D box{};
  box.srcXInBytes = c.srcXInBytes, box.srcY = c.srcY, box.srcMemoryType = c.srcMemoryType;
  box.srcHost = c.srcHost, box.srcDevice = c.srcDevice, box.srcArray = c.srcArray;
  box.srcPitch = c.srcPitch, box.srcHeight = c.Height;
  box.dstXInBytes = c.dstXInBytes, box.dstY = c.dstY, box.dstMemoryType = c.dstMemoryType;
  box.dstHost = c.dstHost, box.dstDevice = c.dstDevice, box.dstArray = c.dstArray;
  box.dstPitch = c.dstPitch, box.dstHeight = c.Height;
  box.WidthInBytes = c.WidthInBytes, box.Height = c.Height, box.Depth = 1;
  return box;
}

}  // namespace gvirtus::cuda

// cudaCreateChannelDesc: a pure function of its arguments in NVIDIA's runtime too (it works
// without a driver or a device and records no error), so the stub answers it by itself.
#include <cuda_runtime_api.h>

#include "plugins/cudart/frontend/stub_call.h"

GVIRTUS_CUDART_EXPORT cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                  cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}

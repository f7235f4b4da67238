#include "plugins/cuda/frontend/not_supported.h"

#include <cuda.h>

#include "common/log.h"

namespace gvirtus::cuda {

int not_supported(const char* name, std::atomic<bool>& logged) {
  if (!logged.exchange(true)) {
    GVIRTUS_LOG(kWarning) << name << " is not supported by gvirtus's libcuda.so.1 yet";
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // namespace gvirtus::cuda

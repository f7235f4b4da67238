// Kernels' parameter layouts (param_layouts.h), kept per function for good (an unordered_map's
// elements never move), so a launch reads one in place.
#include "plugins/cuda/backend/param_layouts.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "cuda_real.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

CUresult param_layout(CUfunction function, bool kernel, const ParamLayout*& layout) {
  static std::mutex& mutex = *new std::mutex;
  static auto& known = *new std::unordered_map<CUfunction, ParamLayout>;
  {
    std::lock_guard lock(mutex);
    if (const auto it = known.find(function); it != known.end()) {
      layout = &it->second;
      return CUDA_SUCCESS;
    }
  }
  if (real().cuFuncGetParamInfo == nullptr || real().cuKernelGetParamInfo == nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  ParamLayout found;
  for (size_t index = 0;; ++index) {
    size_t offset = 0, size = 0;
    const CUresult r = kernel ? real().cuKernelGetParamInfo(reinterpret_cast<CUkernel>(function),
                                                            index, &offset, &size)
                              : real().cuFuncGetParamInfo(function, index, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
    if (r != CUDA_SUCCESS) return r;
    if (offset + size > kMaxParamBytes) return CUDA_ERROR_INVALID_IMAGE;
    found.params.emplace_back(offset, size);
    found.bytes = std::max(found.bytes, offset + size);
  }
  std::lock_guard lock(mutex);
  layout = &known.emplace(function, std::move(found)).first->second;
  return CUDA_SUCCESS;
}

}  // namespace gvirtus::cuda

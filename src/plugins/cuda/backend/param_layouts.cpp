// Kernels' parameter layouts (param_layouts.h), kept per function with the generation of the
// handle's adoption they were learnt in; a launch holds its layout while a newer one replaces it.
#include "plugins/cuda/backend/param_layouts.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "backend/services/session_services.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

struct Known {
  uint64_t generation;
  std::shared_ptr<const ParamLayout> layout;
};

CUresult ask_driver(CUfunction function, bool kernel, ParamLayout& found) {
  if (real().cuFuncGetParamInfo == nullptr || real().cuKernelGetParamInfo == nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
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
  return CUDA_SUCCESS;
}

}  // namespace

CUresult param_layout(CUfunction function, bool named_as_kernel,
                      std::shared_ptr<const ParamLayout>& layout) {
  static std::mutex& mutex = *new std::mutex;
  static auto& known = *new std::unordered_map<CUfunction, Known>;
  const auto [kind, generation] = services::session_services().handles.adoption(function);
  const bool kernel =
      generation != 0 ? kind == static_cast<uint16_t>(HandleKind::kKernel) : named_as_kernel;
  if (generation != 0) {
    std::lock_guard lock(mutex);
    if (const auto it = known.find(function);
        it != known.end() && it->second.generation == generation) {
      layout = it->second.layout;
      return CUDA_SUCCESS;
    }
  }
  auto found = std::make_shared<ParamLayout>();
  if (const CUresult r = ask_driver(function, kernel, *found); r != CUDA_SUCCESS) return r;
  layout = found;
  if (generation != 0) {
    std::lock_guard lock(mutex);
    known.insert_or_assign(function, Known{generation, std::move(found)});
  }
  return CUDA_SUCCESS;
}

bool run_param_layout(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  if (fn != Fn::gvirtusKernelParamLayout) return false;
  const auto request = get_record<ParamLayoutRequest>(in);
  in.expect_end();
  result = vet(request.function);
  if (result == CUDA_SUCCESS && request.function == nullptr) result = CUDA_ERROR_INVALID_HANDLE;
  // A library's kernel or a function: the session's table knows which it gave.
  std::shared_ptr<const ParamLayout> layout;
  if (result == CUDA_SUCCESS) result = param_layout(request.function, false, layout);
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) {
    out.put<uint32_t>(0);  // no slots
    return true;
  }
  out.put<uint32_t>(static_cast<uint32_t>(layout->params.size()));
  for (const auto& [offset, size] : layout->params) {
    put_record(out, ParamSlot{static_cast<uint32_t>(offset), static_cast<uint32_t>(size)});
  }
  return true;
}

}  // namespace gvirtus::cuda

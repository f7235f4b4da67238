// Modules loaded from memory (modules.h), and the exports that load them.
#include "plugins/cuda/frontend/modules.h"

#include "common/call_marshal.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/module_image.h"

namespace gvirtus::cuda {

CUresult load_module(std::span<const std::byte> image, CUmodule* module) {
  if (module == nullptr || image.empty() || image.size() > kMaxModuleImageBytes) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUmodule loaded = nullptr;
  const CUresult result = remote_sync(
      Fn::cuModuleLoadData, [&](WireWriter& w) { w.put_blob(image.data(), image.size()); },
      [&](WireReader& r) { loaded = marshal::get_value<CUmodule>(r); });
  if (result == CUDA_SUCCESS) *module = loaded;  // untouched on failure, as natively
  return result;
}

namespace {

CUresult load_image(CUmodule* module, const void* image) {
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const size_t size = module_image_size(image, kMaxModuleImageBytes);
  if (size == 0) return CUDA_ERROR_INVALID_IMAGE;
  return load_module({static_cast<const std::byte*>(image), size}, module);
}

}  // namespace
}  // namespace gvirtus::cuda

extern "C" __attribute__((visibility("default"))) CUresult cuModuleLoadData(CUmodule* module,
                                                                            const void* image) {
  return gvirtus::cuda::load_image(module, image);
}

extern "C" __attribute__((visibility("default"))) CUresult cuModuleLoadFatBinary(
    CUmodule* module, const void* fatCubin) {
  return gvirtus::cuda::load_image(module, fatCubin);
}

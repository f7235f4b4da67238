#include "plugins/cuda/backend/request_checks.h"

#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "cuda_real.h"
#include "elf_nv_info.h"
#include "fatbin.h"
#include "plugins/cuda/common/module_image.h"

namespace gvirtus::cuda {

bool image_is_sound(std::span<const std::byte> image) {
  if (module_image_size(image.data(), image.size()) != image.size()) return false;
  try {
    switch (module_image_kind(image.data(), image.size())) {
      case ModuleImageKind::kFatbin:
        // Validated whole; layouts are the device's to give (cuFuncGetParamInfo), so entries
        // that disagree between architectures are fine.
        fatbin::kernel_layouts(image, fatbin::ArchConflicts::kHighestArch);
        break;
      case ModuleImageKind::kCubin:
        fatbin::elf_kernel_layouts(image);
        break;
      case ModuleImageKind::kPtx:  // NUL-terminated at its end: the driver's compiler judges it
        break;
    }
    return true;
  } catch (const Error& e) {
    GVIRTUS_LOG(kWarning) << "cuda: a module image was refused: " << e.what();
    return false;
  }
}

std::vector<uint64_t> aligned_copy(std::span<const std::byte> image) {
  std::vector<uint64_t> aligned((image.size() + 7) / 8);
  if (!image.empty()) std::memcpy(aligned.data(), image.data(), image.size());
  return aligned;
}

CUresult not_capturing(CUstream stream) {
  if (real().cuStreamIsCapturing == nullptr) return CUDA_SUCCESS;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUresult r = real().cuStreamIsCapturing(stream, &status);
  if (r != CUDA_SUCCESS) return r;
  return status == CU_STREAM_CAPTURE_STATUS_NONE ? CUDA_SUCCESS
                                                 : CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

}  // namespace gvirtus::cuda

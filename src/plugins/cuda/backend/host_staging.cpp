// The cuda plugin's staging rows (host_staging.h).
#include "plugins/cuda/backend/host_staging.h"

#include "backend/services/staging_blocks.h"
#include "cuda_real.h"

namespace gvirtus::cuda {
namespace {

int32_t register_pages(void* host, uint64_t bytes, uint64_t& device) {
  if (real().cuMemHostRegister_v2 == nullptr || real().cuMemHostGetDevicePointer_v2 == nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult result = real().cuMemHostRegister_v2(
      host, bytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
  if (result != CUDA_SUCCESS) return result;
  CUdeviceptr pointer = 0;
  result = real().cuMemHostGetDevicePointer_v2(&pointer, host, 0);
  if (result != CUDA_SUCCESS) {
    real().cuMemHostUnregister(host);
    return result;
  }
  device = pointer;
  return CUDA_SUCCESS;
}

}  // namespace

bool run_host_staging(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  int32_t status = CUDA_SUCCESS;
  switch (fn) {
    case Fn::gvirtusStagingAlloc:
      services::staging_allocate(
          in, out, status, {CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY},
          [](void* host, uint64_t bytes, uint64_t& device) {
            return register_pages(host, bytes, device);
          },
          [](void* host) { real().cuMemHostUnregister(host); }, "cuda");
      break;
    case Fn::gvirtusStagingWrite:
      services::staging_write(in, out, status, CUDA_SUCCESS);
      break;
    case Fn::gvirtusStagingRead:
      services::staging_read(in, out, status, CUDA_SUCCESS);
      break;
    default:
      return false;
  }
  result = static_cast<CUresult>(status);
  return true;
}

}  // namespace gvirtus::cuda

// The cudart plugin's staging rows (handlers.h; the wire and the blocks:
// backend/services/staging_blocks.h), over the runtime's page registration.
#include <cuda_runtime_api.h>

#include "backend/services/staging_blocks.h"
#include "plugins/cudart/backend/handlers.h"

namespace gvirtus::cudart {
namespace {

int32_t register_pages(void* host, uint64_t bytes, uint64_t& device) {
  cudaError_t result =
      ::cudaHostRegister(host, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (result != cudaSuccess) return result;
  void* pointer = nullptr;
  result = ::cudaHostGetDevicePointer(&pointer, host, 0);
  if (result != cudaSuccess) {
    ::cudaHostUnregister(host);
    return result;
  }
  device = reinterpret_cast<uint64_t>(pointer);
  return cudaSuccess;
}

}  // namespace

bool run_host_staging(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  int32_t status = cudaSuccess;
  switch (fn) {
    case Fn::gvirtusStagingAlloc:
      services::staging_allocate(
          in, out, status, {cudaSuccess, cudaErrorInvalidValue, cudaErrorMemoryAllocation},
          [](void* host, uint64_t bytes, uint64_t& device) {
            return register_pages(host, bytes, device);
          },
          [](void* host) { ::cudaHostUnregister(host); }, "cudart");
      break;
    case Fn::gvirtusStagingWrite:
      services::staging_write(in, out, status, cudaSuccess);
      break;
    case Fn::gvirtusStagingRead:
      services::staging_read(in, out, status, cudaSuccess);
      break;
    default:
      return false;
  }
  result = static_cast<cudaError_t>(status);
  return true;
}

}  // namespace gvirtus::cudart

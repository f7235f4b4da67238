// cudaMemcpy between the device and ordinary client memory through pinned staging blocks of the
// shared arena (common/pinned_staging.h), double-buffered: the stub fills (or empties) one block
// while the backend's runtime copies the other with the GPU's DMA.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>

namespace gvirtus::cudart {

// Copies `count` bytes from `host` to `device` (cudaMemcpyHostToDevice) or back
// (cudaMemcpyDeviceToHost), synchronously as cudaMemcpy does. nullopt when staging is not to be
// had (no shared memory, a small copy, every staging pair busy): the caller copies another way.
std::optional<cudaError_t> copy_staged(void* device, void* host, size_t count, cudaMemcpyKind kind);

}  // namespace gvirtus::cudart

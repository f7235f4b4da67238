// A module image cut down to what the backend's GPUs can run, before it is hashed and sent
// (issue 20: "upload only what the backend's GPU can run"). torch's fatbinaries carry SASS for
// nine architectures of which a GPU runs one; NVIDIA's libraries likewise.
//
// Only a fatbinary's entries are dropped, never changed, and only those no device of the backend
// could load, by CUDA's rules of binary compatibility:
//   - SASS (an ELF entry) for sm_XY runs on a device of compute capability X.Z with Z >= Y only;
//   - PTX for compute_XY is compiled by the driver for any device of capability X.Y or higher;
//   - entries of other kinds are kept.
// So the driver picks among the same candidates it would have had (PTX that could be compiled is
// kept even when SASS exists, so CUDA_FORCE_PTX_JIT on the backend still finds it). A library
// (cuLibraryLoadData) is not tied to one device: what any device of the backend runs is kept.
// When nothing would be left, or the devices are unknown, the image goes as it is and the
// driver answers as it would natively (CUDA_ERROR_NO_BINARY_FOR_GPU).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gvirtus::cuda {

// The compute capabilities (major * 10 + minor) of the backend's devices, or none when they cannot
// be known (devices.cpp, where the stub keeps device attributes).
std::vector<int> backend_device_archs();

// `image` without the entries no device of `archs` can load; empty when it is to go as it is
// (not a fatbinary, nothing to drop, nothing left, or no archs).
std::vector<std::byte> trimmed_for_devices(std::span<const std::byte> image,
                                           const std::vector<int>& archs);

}  // namespace gvirtus::cuda

// Module loading in the client libcuda.so.1: an image in the application's memory is sent to the
// backend, which loads it on its driver (cuModuleLoadData on the wire: common/driver_wire.h).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <span>

namespace gvirtus::cuda {

// Loads the image's bytes as a module of the backend; `module` receives its handle.
CUresult load_module(std::span<const std::byte> image, CUmodule* module);

}  // namespace gvirtus::cuda

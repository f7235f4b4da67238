// Test support: just enough of the CUDA runtime's registration entry points for an nvcc-built
// object (kernels_registered.o) to run its static constructor, which hands us the fatbin wrapper
// exactly as the gvirtus stub receives it.
#pragma once

#include <string>
#include <vector>

namespace gvirtus::fatbin::test {

// The wrapper passed to __cudaRegisterFatBinary before main (null if none was).
const void* registered_wrapper();
// The device names passed to __cudaRegisterFunction.
const std::vector<std::string>& registered_kernels();

}  // namespace gvirtus::fatbin::test

// A kernel's arguments as they travel: the parameter bytes, each argument copied at the offset the
// fatbinary's layout gives (launch.cpp). Shared by launches and kernel graph nodes
// (graph_nodes.cpp), which carry the same bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "plugins/cudart/frontend/registry.h"

namespace gvirtus::cudart {

// The kernel `function` names (a host function or a cudaKernel_t of the stub's), prepared in the
// session, in `kernel`, and `args` packed into `image`. The error a launch of it returns
// otherwise (recorded as the thread's last error): an unknown function, a module that does not
// load, null arguments for a kernel that takes some.
cudaError_t pack_kernel_arguments(const void* function, void* const* args, Kernel*& kernel,
                                  std::vector<std::byte>& image);

}  // namespace gvirtus::cudart

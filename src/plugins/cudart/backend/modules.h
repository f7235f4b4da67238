// The backend's side of modules and launches (wire formats: common/module_wire.h): the
// libraries a session loaded, the kernels and their parameter layouts, and the launch path.
//
// A worker process serves exactly one session, so this state is the process's. Every id and
// layout comes from the client and is validated before use: unknown ids end the session as
// malformed input, and a layout must fit the kernel's parameter bytes.
#pragma once

#include <cuda_runtime_api.h>

#include "common/wire.h"

namespace gvirtus::cudart {

cudaError_t run_module_load(WireReader& in, WireWriter& out);
cudaError_t run_kernel_resolve(WireReader& in, WireWriter& out);
cudaError_t run_var_resolve(WireReader& in, WireWriter& out);
// A launch; `cooperative` launches with cudaLaunchCooperativeKernel.
cudaError_t run_launch(WireReader& in, WireWriter& out, bool cooperative);

// Unloads and forgets every module and kernel: a new session starts with none. Only while no
// call runs (resolved kernels are read without the lock).
void forget_modules();

// The runtime's handle for a kernel id the client resolved (read from `in`); throws
// Error{kInvalidInput} for any other id.
const void* kernel_handle(WireReader& in);

}  // namespace gvirtus::cudart

// The backend's side of modules and launches (wire formats: common/module_wire.h): the
// libraries a session loaded, the kernels and their parameter layouts, and the launch path.
//
// A worker process serves exactly one session, so this state is the process's. Every id and
// layout comes from the client and is validated before use: unknown ids end the session as
// malformed input, and a layout must fit the kernel's parameter bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "common/wire.h"

namespace gvirtus::cudart {

cudaError_t run_module_load(WireReader& in, WireWriter& out);
// Unloads a module the program loaded as a library (cudaLibraryUnload): its kernels' launches
// name no kernel from then on.
cudaError_t run_module_unload(WireReader& in, WireWriter& out);
cudaError_t run_kernel_resolve(WireReader& in, WireWriter& out);
cudaError_t run_var_resolve(WireReader& in, WireWriter& out);
// cudaGetFuncBySymbol: a resolved kernel's function in the current context, held by the session
// as a "function" from then on.
cudaError_t run_function_of_kernel(WireReader& in, WireWriter& out);
// A launch; `cooperative` launches with cudaLaunchCooperativeKernel.
cudaError_t run_launch(WireReader& in, WireWriter& out, bool cooperative);
cudaError_t run_launch_ex(WireReader& in, WireWriter& out);
// cudaOccupancyMaxActiveClusters (`potential_size` false) or MaxPotentialClusterSize of a
// resolved kernel under a launch configuration (common/module_wire.h).
cudaError_t run_cluster_occupancy(WireReader& in, WireWriter& out, bool potential_size);

// Unloads and forgets every module and kernel: a new session starts with none. Only while no
// call runs (resolved kernels are read without the lock).
void forget_modules();

// The runtime's handle for a kernel id the client resolved (read from `in`); throws
// Error{kInvalidInput} for any other id.
const void* kernel_handle(WireReader& in);

// A kernel id the client resolved and its parameter bytes (a launch's, or a kernel node's) as the
// runtime takes them: the kernel's handle and a pointer to each parameter, into a buffer of the
// calling thread's, valid until its next call. Throws Error{kInvalidInput} for an id never
// resolved or bytes that are not the kernel's.
struct KernelArguments {
  const void* function;
  void** args;
};
KernelArguments kernel_arguments(uint64_t id, std::span<const std::byte> params);

// The reverse, for what the runtime reports of a kernel node: the id of the resolved kernel whose
// handle is `function`, with its parameters read from `args` into `params`; nullopt for a
// kernel the session never resolved.
std::optional<uint64_t> kernel_parameters(const void* function, void* const* args,
                                          std::vector<std::byte>& params);

}  // namespace gvirtus::cudart

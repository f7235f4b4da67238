// Managed variables in the runtime stub (frontend/managed_variables.h has the design): a module's
// `__managed__` variables, which nvcc's host code reaches through the address __cudaInitModule
// writes into each one's slot, and a library's, asked with cudaLibraryGetManaged. Each is resolved
// on the backend as managed memory (cudaLibraryGetManaged there) and mirrored here at its address.
#pragma once

#include <cuda_runtime_api.h>

namespace gvirtus::cudart {

struct Module;
struct Variable;

// Mirrors `variable` (resolved, managed) of `module`: cudaSuccess, or cudaErrorMemoryAllocation
// (logged with the reason) when its pages cannot be mirrored here.
cudaError_t mirror_managed_variable(Module& module, const Variable& variable);
// __cudaInitModule's work: every managed variable the module registered resolved, mirrored, and
// its address written into its slot. False, with the reason logged, when one cannot be: the host
// code then finds no address, as natively when the runtime cannot initialise.
bool init_managed_variables(Module& module);
// Forgets the module's mirrored variables (it is unloaded).
void forget_managed_variables(Module& module);

}  // namespace gvirtus::cudart

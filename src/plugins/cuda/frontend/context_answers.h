// Answers about devices' contexts that the client libcuda.so.1 keeps once the backend gave them,
// because they stay the same until this process changes them, and NVIDIA's runtime and PyTorch ask
// for them on every allocation and launch (seen on the simulated device: 46 round trips of
// cuDevicePrimaryCtxGetState, 5 of cuCtxGetId and 2 of cuKernelGetFunction in each training step
// of a small MLP, against 21 launches sent ahead):
//   - a primary context's state while it is active (its flags and that it is active): only this
//     process's session changes it - a retain, a release, new flags, a reset, here or through
//     the runtime stub (process_session::device_generation);
//   - a context's id, fixed for the context's life;
//   - a library kernel's function in a context, fixed while both live;
//   - a function's occupancy for a launch shape, and a function's or kernel's attributes, until
//     an attribute or a cache configuration changes (here, or through the runtime stub); a set
//     of the value an attribute already has is answered here (cuDNN sets the same dynamic shared
//     memory before each of its launches).
// Inactive states and failures are never kept. Every answer is forgotten when a context is
// destroyed or released, a primary context reset or given new flags, a library or module
// unloaded, a function's or kernel's attribute or any cache configuration set, and when the
// runtime stub did the like (a device reset, device flags, a function's attribute or cache
// configuration); answers are keyed by the session's token too (a pool's backends, a forked
// child).
//
// Thread-safe: one lock.
#pragma once

#include <cuda.h>

namespace gvirtus::cuda {

// Forgets every kept answer (called by the stub's own functions that change what they say).
void forget_context_answers();

// Setting a function's or a kernel's attribute (`code`; `device` -1 for a function): whether
// the kept answers already say it has `value` (the set would change nothing: NVIDIA's libraries
// set the same dynamic shared memory before every launch), and after a set succeeded, the new
// value kept and what attributes decide asked again.
bool attribute_already(const void* code, CUdevice device, CUfunction_attribute attribute,
                       int value);
void attribute_set(const void* code, CUdevice device, CUfunction_attribute attribute, int value);

}  // namespace gvirtus::cuda

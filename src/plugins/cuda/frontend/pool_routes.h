// The client libcuda.so.1 over a pool of backends (frontend/pool.h, docs/cluster.md): one device
// list out of every backend's devices, and each call routed to the backend its device, handle or
// address belongs to.
//
// Devices: the pool's ordinals are the backends' devices in the pool's order, each backend's in
// its own order (backend 0's devices first), then selected by the pool's device selection
// (GVIRTUS_VISIBLE_DEVICES or visible_devices, over that list, as CUDA_VISIBLE_DEVICES over a
// machine's GPUs). The list is made at cuInit, which is sent to every backend; a backend that
// cannot be reached then, or fails cuInit, adds no device (the stub logs why), so the ordinals
// are stable among the backends that answer.
//
// Routes: a generated call routes itself (gen_calls.py's pool_routing, through the functions
// below); hand-written code routes with a stub::RouteScope over them. Between calls the thread's
// route is the backend of its current context (pool_follow_context), where calls about nothing in
// particular (cuMemAlloc, cuModuleLoadData, cuStreamCreate) go, as natively they go to the
// current context's device.
//
// Handles and device addresses are noted with the backend that gave them and forgotten when
// destroyed or freed. Device memory is kept disjoint across backends: an allocation that overlaps
// another backend's is taken again (disjoint_allocations.cpp). One that no call returned (a stream
// the application made up) names no backend: its call goes to the thread's route, whose backend
// refuses it as unknown.
//
// With one backend (any configuration that names none) every function here answers at once:
// nothing is translated, routed or noted.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace gvirtus::cuda {

// Whether the process's configuration names more than one backend.
bool pooled();

// cuInit on every backend of the pool, then the device list from each one's cuDeviceGetCount.
// Succeeds when one backend's cuInit did (the first failure otherwise).
CUresult pool_init(unsigned int flags);

struct PoolDevice {
  uint32_t backend;
  CUdevice local;  // its ordinal on that backend
};
// The pool's devices, or CUDA_ERROR_NOT_INITIALIZED before pool_init succeeded.
CUresult pool_devices(const std::vector<PoolDevice>** devices);

// The generated calls' routing (the descriptor's pool_routing).
std::optional<uint32_t> pool_backend_of_device(CUdevice device);
// A device's ordinal on its backend; -1 (which its backend refuses as an invalid device) for one
// the pool does not have or that is on another backend than the thread's route.
CUdevice pool_local_device(CUdevice device);
// An ordinal on the thread's route's backend as the pool's.
CUdevice pool_global_device(CUdevice local);

std::optional<uint32_t> pool_backend_of_value(uint64_t value);
void pool_note_value(uint64_t value);  // as the thread's route's
void pool_forget_value(uint64_t value);
std::optional<uint32_t> pool_backend_of_address(CUdeviceptr address);
// Notes an allocation as the thread's route's. False when it overlaps another backend's: two
// drivers place device memory at the same addresses (every process's driver starts from the same
// layout), and a call naming that range could not be routed. Such an allocation is not noted; the
// thread's pending collision (pool_take_collision) says which, for the allocating call to take
// another (disjoint_allocations.cpp).
// `noted` is the allocation clock's (memory_ranges.h) for the allocation.
bool pool_note_address(CUdeviceptr address, uint64_t bytes, uint64_t noted);
// The thread's route's, if it is noted so by the time the allocation clock read `noted_by`.
void pool_forget_address(CUdeviceptr address, uint64_t noted_by);

// The allocation the thread's last pool_note_address refused, and the backend that made it.
struct PoolCollision {
  CUdeviceptr address;
  uint32_t backend;
};
std::optional<PoolCollision> pool_take_collision();

template <typename Handle>
uint64_t handle_value(Handle handle) {
  if constexpr (std::is_pointer_v<Handle>) {
    return reinterpret_cast<uintptr_t>(handle);
  } else {
    return static_cast<uint64_t>(handle);
  }
}
// The kind names a handle for messages; the value alone identifies it (a CUkernel passed as a
// CUfunction is the same handle).
template <typename Handle>
std::optional<uint32_t> pool_backend_of_handle(const char* /*kind*/, Handle handle) {
  return pool_backend_of_value(handle_value(handle));
}
template <typename Handle>
void pool_note_handle(const char* /*kind*/, Handle handle) {
  pool_note_value(handle_value(handle));
}
template <typename Handle>
void pool_forget_handle(const char* /*kind*/, Handle handle) {
  pool_forget_value(handle_value(handle));
}
inline std::optional<uint32_t> pool_backend_of_address(const void* address) {
  return pool_backend_of_address(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(address)));
}

// Routes the calling thread to the backend of `context` (its new current context), if known.
void pool_follow_context(CUcontext context);

}  // namespace gvirtus::cuda

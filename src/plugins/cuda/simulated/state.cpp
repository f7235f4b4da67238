// The simulated device's shared state (state.h).
#include "state.h"

#include <algorithm>

namespace gvirtus::simulated {

State& state() {
  static State* const instance = new State;  // never destroyed: exports may run at exit
  return *instance;
}

CUcontext primary_context(CUdevice dev) {
  static char context_objects[kMaxDevices];
  return reinterpret_cast<CUcontext>(&context_objects[dev]);
}

bool valid_device(const State& s, CUdevice dev) {
  return dev >= 0 && static_cast<size_t>(dev) < s.devices.size();
}

CUcontext& current_context() {
  thread_local CUcontext current = nullptr;
  return current;
}

namespace {

// [address, address + bytes) in accessible mappings that follow one another, or null.
std::byte* mapped_range(State& s, CUdeviceptr address, uint64_t bytes) {
  auto it = s.mappings.upper_bound(address);
  if (it == s.mappings.begin()) return nullptr;
  --it;
  if (address - it->first >= it->second.bytes) return nullptr;
  const uint64_t end = address + bytes;
  for (uint64_t at = it->first;;) {
    if (it == s.mappings.end() || it->first != at || !it->second.accessible) return nullptr;
    at += it->second.bytes;
    if (at >= end) return reinterpret_cast<std::byte*>(address);
    ++it;
  }
}

// [address, address + bytes) in one registered host range (its device pointer is its address).
std::byte* registered_range(State& s, CUdeviceptr address, uint64_t bytes) {
  const auto range = s.registered_host.find(reinterpret_cast<const void*>(address));
  if (!range) return nullptr;
  const uint64_t offset = address - range->start;
  if (offset >= range->bytes || range->bytes - offset < bytes) return nullptr;
  return reinterpret_cast<std::byte*>(address);
}

// [address, address + bytes) in one managed region (its device pointer is its address).
std::byte* managed_range(State& s, CUdeviceptr address, uint64_t bytes) {
  const auto range = s.managed.find(reinterpret_cast<const void*>(address));
  if (!range) return nullptr;
  const uint64_t offset = address - range->start;
  if (offset >= range->bytes || range->bytes - offset < bytes) return nullptr;
  return reinterpret_cast<std::byte*>(address);
}

// A range outside the allocations: in mapped virtual memory, registered host memory or managed
// memory.
std::byte* elsewhere(State& s, CUdeviceptr address, uint64_t bytes) {
  if (std::byte* mapped = mapped_range(s, address, bytes)) return mapped;
  if (std::byte* managed = managed_range(s, address, bytes)) return managed;
  return registered_range(s, address, bytes);
}

}  // namespace

std::byte* device_range(State& s, CUdeviceptr address, uint64_t bytes) {
  if (address > UINT64_MAX - bytes) return nullptr;
  auto it = s.allocation_bytes.upper_bound(address);
  if (it == s.allocation_bytes.begin()) return elsewhere(s, address, bytes);
  --it;
  const uint64_t offset = address - it->first;
  if (offset > it->second || it->second - offset < bytes) return elsewhere(s, address, bytes);
  return s.allocations.at(it->first).get() + offset;
}

Function* function_of(State& s, CUfunction handle) {
  if (const auto it = s.functions.find(handle); it != s.functions.end()) return it->second.get();
  const auto kernel = s.function_by_kernel.find(handle);
  return kernel != s.function_by_kernel.end() ? s.functions.at(kernel->second).get() : nullptr;
}

CUkernel kernel_of(CUfunction function) {
  return reinterpret_cast<CUkernel>(&reinterpret_cast<Function*>(function)->kernel_tag);
}

bool known_stream(const State& s, CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD ||
         s.streams.count(stream) != 0;
}

CUdevice context_device(const State& s, CUcontext ctx) {
  for (CUdevice dev = 0; valid_device(s, dev); ++dev) {
    if (ctx == primary_context(dev)) return dev;
  }
  const auto own = s.contexts.find(ctx);
  return own != s.contexts.end() ? own->second.device : -1;
}

bool known_context(const State& s, CUcontext ctx) {
  return context_device(s, ctx) >= 0;
}

CUresult needs_context() {
  return current_context() != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUcontext effective_context() {
  const CUcontext current = current_context();
  return current != nullptr ? current : primary_context(0);
}

void own(State& s, const void* object) {
  s.owners[object] = effective_context();
}

void disown(State& s, const void* object) {
  s.owners.erase(object);
}

CUcontext owning_context(const State& s, const void* object) {
  const auto it = s.owners.find(object);
  return it != s.owners.end() ? it->second : primary_context(0);
}

CUmemoryPool device_pool(CUdevice dev) {
  static char pool_objects[kMaxDevices];
  return reinterpret_cast<CUmemoryPool>(&pool_objects[dev]);
}

bool known_pool(const State& s, CUmemoryPool pool) {
  for (CUdevice dev = 0; valid_device(s, dev); ++dev) {
    if (pool == device_pool(dev)) return true;
  }
  return s.own_pools.count(pool) != 0;
}

}  // namespace gvirtus::simulated

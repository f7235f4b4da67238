#include "plugins/cudart/backend/allocation_ledger.h"

#include <cuda_runtime_api.h>

#include "common/error.h"
#include "plugins/cudart/common/marshal.h"

namespace gvirtus::cudart {
namespace {

// Reads the reply's result and, for a success, the output parameter that follows it.
template <typename T>
bool reply_output(WireReader& reply, T& value) {
  if (reply.get<int32_t>() != cudaSuccess) return false;
  if (!reply.get_bool()) return false;  // the application passed no pointer for it
  value = get_value<T>(reply);
  return true;
}

uint64_t saturating_product(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? UINT64_MAX : out;
}

MemoryEffect read_effect(Fn fn, WireReader& request, WireReader& reply) {
  MemoryEffect effect;
  switch (fn) {
    case Fn::cudaMalloc:
    case Fn::cudaMallocAsync:
    case Fn::cudaMallocFromPoolAsync: {
      Output<void*> ignored(request);  // the request's copy of the output
      const auto size = get_value<size_t>(request);
      void* address = nullptr;
      if (!reply_output(reply, address)) return effect;
      return {MemoryEffect::kAllocated, reinterpret_cast<uintptr_t>(address), size};
    }
    case Fn::cudaMallocPitch: {
      Output<void*> ignored_ptr(request);
      Output<size_t> ignored_pitch(request);
      get_value<size_t>(request);  // width: the pitch covers it
      const auto height = get_value<size_t>(request);
      void* address = nullptr;
      if (!reply_output(reply, address)) return effect;
      size_t pitch = 0;
      if (!reply.get_bool()) return effect;
      pitch = get_value<size_t>(reply);
      return {MemoryEffect::kAllocated, reinterpret_cast<uintptr_t>(address),
              saturating_product(pitch, height)};
    }
    case Fn::cudaMalloc3D: {
      Output<cudaPitchedPtr> ignored(request);
      const auto extent = get_value<cudaExtent>(request);
      cudaPitchedPtr pitched{};
      if (!reply_output(reply, pitched)) return effect;
      return {MemoryEffect::kAllocated, reinterpret_cast<uintptr_t>(pitched.ptr),
              saturating_product(saturating_product(pitched.pitch, extent.height),
                                 extent.depth == 0 ? 1 : extent.depth)};
    }
    case Fn::cudaFree:
    case Fn::cudaFreeAsync: {
      const auto address = get_value<void*>(request);
      if (reply.get<int32_t>() != cudaSuccess) return effect;
      return {MemoryEffect::kFreed, reinterpret_cast<uintptr_t>(address), 0};
    }
    default:
      return effect;
  }
}

}  // namespace

bool affects_device_memory(Fn fn) {
  switch (fn) {
    case Fn::cudaMalloc:
    case Fn::cudaMallocAsync:
    case Fn::cudaMallocFromPoolAsync:
    case Fn::cudaMallocPitch:
    case Fn::cudaMalloc3D:
    case Fn::cudaFree:
    case Fn::cudaFreeAsync:
      return true;
    default:
      return false;
  }
}

MemoryEffect memory_effect(Fn fn, WireReader request, std::span<const std::byte> reply) {
  if (!affects_device_memory(fn)) return {};
  WireReader in_reply(reply, "reply");
  try {
    MemoryEffect effect = read_effect(fn, request, in_reply);
    if (effect.kind != MemoryEffect::kNone && effect.address == 0) return {};  // cudaFree(nullptr)
    return effect;
  } catch (const Error&) {
    return {};  // the handler accepted the request; an unreadable copy only goes uncounted
  }
}

void AllocationLedger::apply(const MemoryEffect& effect) {
  std::lock_guard lock(mutex_);
  if (effect.kind == MemoryEffect::kAllocated) {
    // A reused address whose free we did not see (e.g. freed by a call not counted) is replaced.
    uint64_t& size = sizes_[effect.address];
    bytes_ -= size;
    size = effect.bytes;
    bytes_ += size;
  } else if (effect.kind == MemoryEffect::kFreed) {
    const auto it = sizes_.find(effect.address);
    if (it == sizes_.end()) return;
    bytes_ -= it->second;
    sizes_.erase(it);
  } else {
    return;
  }
  if (published_ != nullptr) published_->store(bytes_, std::memory_order_relaxed);
}

uint64_t AllocationLedger::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace gvirtus::cudart

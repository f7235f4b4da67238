// A memory pool's attribute on the wire (custom rows 218-219 of cudart_calls.txt), for the stub
// (frontend/memory_pools.cpp) and the backend (backend/memory_pools.cpp).
//
//   cudaMemPoolGetAttribute   u64 pool, u32 attribute. Reply: i32 result, then the value as 8
//                             bytes (zero after a failure).
//   cudaMemPoolSetAttribute   u64 pool, u32 attribute, the value as 8 bytes. Reply: i32 result.
// A value is an int or a 64-bit integer by attribute (attribute_bytes): the stub reads and writes
// the caller's value with that size only; the backend hands the runtime an 8-byte buffer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gvirtus::cudart {

// The bytes of `attribute`'s value: 4 for the reuse flags (int), 8 for the byte counts
// (cuuint64_t), 0 for an attribute CUDA 13 does not define (the runtime refuses it).
inline size_t attribute_bytes(unsigned attribute) {
  switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      return sizeof(int);
    case cudaMemPoolAttrReleaseThreshold:
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemCurrent:
    case cudaMemPoolAttrUsedMemHigh:
      return sizeof(unsigned long long);
    default:
      return 0;
  }
}

}  // namespace gvirtus::cudart

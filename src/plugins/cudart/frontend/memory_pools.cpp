// cudaMemPoolGetAttribute and cudaMemPoolSetAttribute (custom rows 218-219; wire:
// common/memory_pool_wire.h): the caller's value is read and written with its attribute's size.
#include <cstdint>
#include <cstring>

#include "plugins/cudart/common/memory_pool_wire.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

uint32_t attribute_bits(cudaMemPoolAttr attr) {
  uint32_t bits = 0;  // a C caller may pass any value: never loaded as the enum
  static_assert(sizeof bits == sizeof attr);
  std::memcpy(&bits, &attr, sizeof bits);
  return bits;
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool,
                                                          cudaMemPoolAttr attr, void* value) {
  if (value == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  const uint32_t attribute = attribute_bits(attr);
  uint64_t got = 0;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaMemPoolGetAttribute,
      [&](gvirtus::WireWriter& w) {
        w.put<uint64_t>(reinterpret_cast<uintptr_t>(memPool));
        w.put<uint32_t>(attribute);
      },
      [&](gvirtus::WireReader& r) { got = r.get<uint64_t>(); });
  if (result == cudaSuccess) {
    if (cr::attribute_bytes(attribute) == sizeof(int)) {
      const int narrow = static_cast<int>(got);
      std::memcpy(value, &narrow, sizeof narrow);
    } else if (cr::attribute_bytes(attribute) == sizeof got) {
      std::memcpy(value, &got, sizeof got);
    }
  }
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
                                                          cudaMemPoolAttr attr, void* value) {
  if (value == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  const uint32_t attribute = attribute_bits(attr);
  uint64_t bits = 0;
  if (cr::attribute_bytes(attribute) == sizeof(int)) {
    int narrow = 0;
    std::memcpy(&narrow, value, sizeof narrow);
    bits = static_cast<uint64_t>(static_cast<int64_t>(narrow));
  } else if (cr::attribute_bytes(attribute) == sizeof bits) {
    std::memcpy(&bits, value, sizeof bits);
  }
  return cr::remote_sync(
      cr::Fn::cudaMemPoolSetAttribute,
      [&](gvirtus::WireWriter& w) {
        w.put<uint64_t>(reinterpret_cast<uintptr_t>(memPool));
        w.put<uint32_t>(attribute);
        w.put<uint64_t>(bits);
      },
      [](gvirtus::WireReader&) {});
}

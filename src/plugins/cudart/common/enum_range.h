// Which integers an object of one of CUDA's enumerations may hold, so that neither side ever
// materialises another.
//
// CUDA's enums have no fixed underlying type, so in C++ an object of one may hold only the values
// of the smallest bit-field that holds all its enumerators: anything else is undefined behaviour
// (and UBSan says so). A C program may pass any int, and a peer may send any bytes, so enum values
// travel as their bits and are checked against that range before they become enum objects. Each
// enum the call table uses names its largest enumerator here (from CUDA's own header, so a new
// CUDA that adds values widens the range by itself); one missing is a compile error.
#pragma once

#include <cuda_runtime_api.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gvirtus::cudart {

template <typename E>
struct EnumLargest;  // static constexpr unsigned kValue: the enum's largest enumerator

#define GVIRTUS_ENUM_LARGEST(E, largest)        \
  template <>                                   \
  struct EnumLargest<E> {                       \
    static constexpr unsigned kValue = largest; \
  }
GVIRTUS_ENUM_LARGEST(cudaMemcpyKind, cudaMemcpyDefault);
GVIRTUS_ENUM_LARGEST(cudaDeviceAttr, cudaDevAttrMax);
GVIRTUS_ENUM_LARGEST(cudaDeviceP2PAttr, cudaDevP2PAttrOnlyPartialNativeAtomicSupported);
GVIRTUS_ENUM_LARGEST(cudaFuncAttribute, cudaFuncAttributeMax);
GVIRTUS_ENUM_LARGEST(cudaFuncCache, cudaFuncCachePreferEqual);
GVIRTUS_ENUM_LARGEST(cudaLimit, cudaLimitPersistingL2CacheSize);
GVIRTUS_ENUM_LARGEST(cudaStreamCaptureMode, cudaStreamCaptureModeRelaxed);
GVIRTUS_ENUM_LARGEST(cudaStreamCaptureStatus, cudaStreamCaptureStatusInvalidated);
#undef GVIRTUS_ENUM_LARGEST

// The bits of an enum object, read without loading it as an enum.
template <typename E>
std::underlying_type_t<E> enum_bits(const E& value) {
  std::underlying_type_t<E> bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Whether `bits` is a value an object of E may hold (all these enums are non-negative).
template <typename E>
constexpr bool enum_holds(int64_t bits) {
  constexpr unsigned kWidth = std::bit_width(EnumLargest<E>::kValue);
  return bits >= 0 && bits < (int64_t{1} << kWidth);
}

}  // namespace gvirtus::cudart

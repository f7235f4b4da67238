// Bounds-checked little-endian reads from a hostile byte span, shared by the fatbin parsers.
// Every read names what it was reading, so a corrupt input yields a message that says where.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/error.h"
#include "common/wire.h"

namespace gvirtus::fatbin {

// Throws Error{kInvalidInput, "fatbin: <what>"}.
[[noreturn]] inline void fail(const std::string& what) {
  raise(ErrorKind::kInvalidInput, "fatbin: " + what);
}

// True when [offset, offset + size) lies within `total` bytes, without overflowing.
constexpr bool in_bounds(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

// The sub-span [offset, offset + size) of `bytes`, or an error naming `what`.
inline std::span<const std::byte> slice(std::span<const std::byte> bytes, uint64_t offset,
                                        uint64_t size, const char* what) {
  if (!in_bounds(offset, size, bytes.size())) {
    fail(std::string(what) + " [" + std::to_string(offset) + ", +" + std::to_string(size) +
         ") lies outside its " + std::to_string(bytes.size()) + " bytes");
  }
  return bytes.subspan(offset, size);
}

// The little-endian integer at `offset`, or an error naming `what`.
template <typename T>
T read_le(std::span<const std::byte> bytes, uint64_t offset, const char* what) {
  return load_le<T>(slice(bytes, offset, sizeof(T), what).data());
}

}  // namespace gvirtus::fatbin

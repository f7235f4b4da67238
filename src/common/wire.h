// Explicit little-endian encoding of payloads: fixed-width integers and length-prefixed blobs.
//
// WireWriter appends to a growable buffer it owns (reused across calls, so the hot path does not
// allocate once warm). WireReader walks a received view and treats every byte as hostile: each read
// is bounds-checked and a short or inconsistent payload throws Error{kInvalidInput} saying what was
// being read, never reads past the end.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.h"

namespace gvirtus {

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "mixed-endian machines are not supported");

template <typename T>
constexpr T to_little_endian(T value) {
  static_assert(std::is_integral_v<T>);
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    T swapped{};
    for (size_t i = 0; i < sizeof(T); ++i) {
      swapped = static_cast<T>((swapped << 8) | ((value >> (8 * i)) & 0xff));
    }
    return swapped;
  }
  return value;
}

// Stores an integer at `out` in little-endian order.
template <typename T>
inline void store_le(std::byte* out, T value) {
  const T le = to_little_endian(value);
  std::memcpy(out, &le, sizeof(T));
}

// Loads a little-endian integer from `in`.
template <typename T>
inline T load_le(const std::byte* in) {
  T le;
  std::memcpy(&le, in, sizeof(T));
  return to_little_endian(le);
}

// An allocator whose value-less construct() default-initialises: a vector of bytes then grows
// without zero-filling what it is about to overwrite (put_space() hands out room for a copy of
// up to a chunk, 16 MiB, written in place).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* at) noexcept {
    ::new (static_cast<void*>(at)) U;
  }
  template <typename U, typename... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};

class WireWriter {
 public:
  // Empties the buffer but keeps its capacity.
  void clear() { buffer_.clear(); }
  // Drops everything after the first `bytes` bytes (undoes speculative puts).
  void truncate(size_t bytes) {
    if (bytes < buffer_.size()) buffer_.resize(bytes);
  }

  template <typename T>
  void put(T value) {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
    if constexpr (std::is_enum_v<T>) {
      put(static_cast<std::underlying_type_t<T>>(value));
    } else {
      const size_t at = grow(sizeof(T));
      store_le(buffer_.data() + at, value);
    }
  }
  void put_bool(bool value) { put<uint8_t>(value ? 1 : 0); }
  void put_double(double value) { put(std::bit_cast<uint64_t>(value)); }
  // Raw bytes, no length prefix (the reader must know the length).
  void put_raw(const void* data, size_t bytes) {
    if (bytes == 0) return;
    const size_t at = grow(bytes);
    std::memcpy(buffer_.data() + at, data, bytes);
  }
  // A u64 length followed by the bytes.
  void put_blob(const void* data, size_t bytes) {
    put<uint64_t>(bytes);
    put_raw(data, bytes);
  }
  void put_string(std::string_view text) { put_blob(text.data(), text.size()); }

  // Appends `bytes` uninitialised bytes and returns where they are, for data written in place
  // (a device-to-host copy lands directly in the reply). Valid until the next put.
  std::byte* put_space(size_t bytes) {
    const size_t at = grow(bytes);  // first: growing may move the buffer
    return buffer_.data() + at;
  }
  // Overwrites an integer written earlier at byte `offset` (a result known only at the end).
  template <typename T>
  void store_at(size_t offset, T value) {
    store_le(buffer_.data() + offset, value);
  }

  std::span<const std::byte> view() const { return buffer_; }
  size_t size() const { return buffer_.size(); }

 private:
  size_t grow(size_t bytes) {
    const size_t at = buffer_.size();
    buffer_.resize(at + bytes);
    return at;
  }
  std::vector<std::byte, UninitializedAllocator<std::byte>> buffer_;
};

class WireReader {
 public:
  // `what` names the message being decoded, for error messages ("reply to cudaMalloc").
  WireReader(std::span<const std::byte> data, std::string_view what) : data_(data), what_(what) {}

  template <typename T>
  T get() {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
    if constexpr (std::is_enum_v<T>) {
      return static_cast<T>(get<std::underlying_type_t<T>>());
    } else {
      const std::byte* at = take(sizeof(T), "an integer");
      return load_le<T>(at);
    }
  }
  bool get_bool() {
    const uint8_t v = get<uint8_t>();
    if (v > 1) fail("a boolean", 1);
    return v == 1;
  }
  double get_double() { return std::bit_cast<double>(get<uint64_t>()); }
  // A view of the next `bytes` bytes (no copy).
  std::span<const std::byte> get_raw(size_t bytes) { return {take(bytes, "raw bytes"), bytes}; }
  // A u64-length-prefixed blob, at most `max_bytes` long.
  std::span<const std::byte> get_blob(size_t max_bytes = SIZE_MAX) {
    const uint64_t bytes = get<uint64_t>();
    if (bytes > max_bytes || bytes > remaining()) fail("a blob", bytes);
    return {take(static_cast<size_t>(bytes), "a blob"), static_cast<size_t>(bytes)};
  }
  std::string_view get_string(size_t max_bytes = SIZE_MAX) {
    const auto blob = get_blob(max_bytes);
    return {reinterpret_cast<const char*>(blob.data()), blob.size()};
  }

  size_t remaining() const { return data_.size() - offset_; }
  // Requires that everything was consumed: trailing bytes mean the peer and we disagree.
  void expect_end() const {
    if (remaining() != 0) {
      raise(ErrorKind::kInvalidInput,
            std::string(what_) + ": " + std::to_string(remaining()) + " unexpected trailing bytes");
    }
  }

 private:
  const std::byte* take(size_t bytes, const char* kind) {
    if (bytes > remaining()) fail(kind, bytes);
    const std::byte* at = data_.data() + offset_;
    offset_ += bytes;
    return at;
  }
  [[noreturn]] void fail(const char* kind, uint64_t bytes) const {
    raise(ErrorKind::kInvalidInput, std::string(what_) + ": truncated or malformed while reading " +
                                        kind + " (" + std::to_string(bytes) +
                                        " bytes wanted at offset " + std::to_string(offset_) +
                                        ", " + std::to_string(remaining()) + " left)");
  }

  std::span<const std::byte> data_;
  size_t offset_ = 0;
  std::string_view what_;
};

}  // namespace gvirtus

// How the arguments of a generated call travel, for every library (tools/gen/gen_calls.py writes
// both sides of each call table with these functions).
//
// Values: integers and enums as fixed-width little-endian integers, pointers and handles as u64
// (device pointers and library handles are the backend's values, passed through opaquely), floats
// and plain structs as their bytes - both ends are x86-64 Linux, the only ABI the libraries we
// remote have. Outputs travel as (present flag, value) both ways, so a null output pointer stays
// null for the real library and an output the library does not write stays as the caller left it.
// Arrays and strings are bounded by the limits below on both sides: the stub answers a call over
// them itself, and the backend takes one from the wire as malformed, so a hostile length never
// makes the backend allocate.
//
//   value         its bytes (above)
//   out / inref   u8 present, [value]
//   in array      u8 present, [u64 count, count elements]           count: the row's length
//   out array     u8 present, [u64 count, count elements] both ways (the caller's, then the
//                 library's), so elements the library does not write stay as they were
//   in string     u8 present, [u64 length, bytes without the NUL]   no NUL inside
//   out string    u8 present, [u64 capacity, capacity bytes] both ways, like an out array
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.h"
#include "common/wire.h"

namespace gvirtus::marshal {

// The most bytes one array or string argument may have (both sides enforce it).
inline constexpr uint64_t kMaxArgumentBytes = uint64_t{16} << 20;

// Which integers an object of an enumeration may hold, so that neither side ever materialises
// another. C enums have no fixed underlying type, so in C++ an object of one may hold only the
// values of the smallest bit-field that holds all its enumerators: anything else is undefined
// behaviour (UBSan says so). A C program may pass any int and a peer may send any bytes, so enum
// values travel as their bits and are checked against that range before they become enum objects.
// Each enum a call table uses gets its specialisation from the generator, computed from the
// library's own header (L_enums.h); one missing is a compile error.
template <typename E>
struct EnumRange;  // static constexpr long long kSmallest, kLargest: its extreme enumerators

// The bits of an enum object, read without loading it as an enum.
template <typename E>
std::underlying_type_t<E> enum_bits(const E& value) {
  std::underlying_type_t<E> bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Whether `bits` is a value an object of E may hold ([dcl.enum]: the range of the smallest
// bit-field, two's complement when an enumerator is negative).
template <typename E>
constexpr bool enum_holds(int64_t bits) {
  constexpr long long kSmallest = EnumRange<E>::kSmallest, kLargest = EnumRange<E>::kLargest;
  if constexpr (kSmallest >= 0) {
    constexpr unsigned kWidth = std::bit_width(static_cast<unsigned long long>(kLargest));
    return bits >= 0 && (kWidth >= 63 || bits < (int64_t{1} << kWidth));
  } else {
    constexpr unsigned long long kMagnitude =
        std::max(static_cast<unsigned long long>(-(kSmallest + 1)),
                 static_cast<unsigned long long>(kLargest < 0 ? 0 : kLargest));
    constexpr unsigned kWidth = std::bit_width(kMagnitude);  // plus the sign bit
    return kWidth >= 63 || (bits >= -(int64_t{1} << kWidth) && bits < (int64_t{1} << kWidth));
  }
}

template <typename T>
void put_value(WireWriter& out, const T& value) {
  if constexpr (std::is_pointer_v<T>) {
    out.put<uint64_t>(reinterpret_cast<uintptr_t>(value));
  } else if constexpr (std::is_enum_v<T>) {
    out.put(enum_bits(value));  // whatever the caller put there, without loading it as an enum
  } else if constexpr (std::is_integral_v<T>) {
    out.put(value);
  } else {
    static_assert(std::is_trivially_copyable_v<T>, "only plain values travel");
    out.put_raw(&value, sizeof value);
  }
}

// An enum's bits from the wire into `value`; false (and `value` untouched) when they are outside
// the enum's range.
template <typename T>
bool get_enum(WireReader& in, T& value) {
  const auto bits = in.get<std::underlying_type_t<T>>();
  if (!enum_holds<T>(bits)) return false;
  value = static_cast<T>(bits);
  return true;
}

// A value from the wire. An enum outside its range is malformed: the stub answers such calls
// itself (the library's invalid-value status), so only a hostile peer sends one.
template <typename T>
T get_value(WireReader& in) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(static_cast<uintptr_t>(in.get<uint64_t>()));
  } else if constexpr (std::is_enum_v<T>) {
    const auto bits = in.get<std::underlying_type_t<T>>();
    if (!enum_holds<T>(bits)) {
      raise(ErrorKind::kInvalidInput,
            "enum value " + std::to_string(bits) + " is outside the range of its type");
    }
    return static_cast<T>(bits);
  } else if constexpr (std::is_integral_v<T>) {
    return in.get<T>();
  } else {
    static_assert(std::is_trivially_copyable_v<T>, "only plain values travel");
    T value;
    const auto bytes = in.get_raw(sizeof value);
    std::memcpy(&value, bytes.data(), sizeof value);
    return value;
  }
}

// An output parameter as the stub sends it: present flag, then the caller's current value.
template <typename T>
void put_output(WireWriter& out, const T* where) {
  out.put<uint8_t>(where != nullptr ? 1 : 0);
  if (where != nullptr) put_value(out, *where);
}

// An output parameter as the stub receives it back; writes through `where` if it is not null.
template <typename T>
void get_output(WireReader& in, T* where) {
  const bool present = in.get_bool();
  if (present != (where != nullptr)) {
    raise(ErrorKind::kInvalidInput, "an output parameter came back in the wrong shape");
  }
  if (present) *where = get_value<T>(in);
}

// An output parameter on the backend: holds the value the real library writes into.
template <typename T>
class Output {
 public:
  explicit Output(WireReader& in) : present_(in.get_bool()) {
    if constexpr (std::is_enum_v<T>) {
      // The caller's initial value of an enum output may be anything (an uninitialised variable);
      // one outside the range starts as the enum's zero instead.
      if (present_ && !get_enum(in, value_)) value_ = T{};
    } else if (present_) {
      value_ = get_value<T>(in);
    }
  }
  T* ptr() { return present_ ? &value_ : nullptr; }
  void put(WireWriter& out) const {
    out.put<uint8_t>(present_ ? 1 : 0);
    if (present_) put_value(out, value_);
  }

 private:
  bool present_;
  T value_{};
};

// A length expression's value as an element count, or false when it is negative or the elements
// would exceed kMaxArgumentBytes (the stub then answers the call as invalid itself).
template <typename T, typename Length>
bool usable_count(Length length, uint64_t& count) {
  if constexpr (std::is_signed_v<Length>) {
    if (length < 0) return false;
  }
  count = static_cast<uint64_t>(length);
  return count <= kMaxArgumentBytes / sizeof(T);
}

// An array argument as the stub sends it (an input array, or an output array's initial
// elements): present flag, then the count and the elements.
template <typename T>
void put_array(WireWriter& out, const T* elements, uint64_t count) {
  static_assert(std::is_trivially_copyable_v<T>, "only plain elements travel");
  out.put<uint8_t>(elements != nullptr ? 1 : 0);
  if (elements == nullptr) return;
  out.put<uint64_t>(count);
  out.put_raw(elements, count * sizeof(T));
}

// An output array as the stub receives it back: exactly the elements it sent.
template <typename T>
void get_array(WireReader& in, T* elements, uint64_t count) {
  const bool present = in.get_bool();
  if (present != (elements != nullptr)) {
    raise(ErrorKind::kInvalidInput, "an output array came back in the wrong shape");
  }
  if (!present) return;
  if (in.get<uint64_t>() != count) {
    raise(ErrorKind::kInvalidInput, "an output array came back with another length");
  }
  const auto bytes = in.get_raw(count * sizeof(T));
  if (count != 0) std::memcpy(elements, bytes.data(), bytes.size());
}

// An array argument on the backend, input or output: the elements in memory of its own (aligned
// for T, unlike the request's bytes). `expected` is the row's length expression evaluated over
// the decoded arguments: a count that disagrees with it is malformed.
template <typename T>
class Array {
 public:
  explicit Array(WireReader& in) : present_(in.get_bool()) {
    if (!present_) return;
    const uint64_t count = in.get<uint64_t>();
    if (count > kMaxArgumentBytes / sizeof(T)) {
      raise(ErrorKind::kInvalidInput,
            "an array argument of " + std::to_string(count) + " elements is over the limit");
    }
    const auto bytes = in.get_raw(count * sizeof(T));
    elements_.resize(count);
    if (count != 0) std::memcpy(elements_.data(), bytes.data(), bytes.size());
  }
  template <typename Length>
  void expect_count(Length expected) const {
    uint64_t count = 0;
    if (present_ && (!usable_count<T>(expected, count) || count != elements_.size())) {
      raise(ErrorKind::kInvalidInput, "an array argument's length disagrees with its count");
    }
  }
  // Null when the caller passed null; otherwise the elements (a valid pointer even when empty).
  T* ptr() { return present_ ? (elements_.empty() ? &empty_ : elements_.data()) : nullptr; }
  void put(WireWriter& out) const {
    out.put<uint8_t>(present_ ? 1 : 0);
    if (!present_) return;
    out.put<uint64_t>(elements_.size());
    out.put_raw(elements_.data(), elements_.size() * sizeof(T));
  }

 private:
  bool present_;
  std::vector<T> elements_;
  T empty_{};
};

// A C string argument as the stub sends it.
inline void put_c_string(WireWriter& out, const char* text) {
  out.put<uint8_t>(text != nullptr ? 1 : 0);
  if (text != nullptr) out.put_string(text);
}

// A C string argument on the backend: its text, NUL-terminated, or null. A string with a NUL
// inside or over the limit is malformed (no stub sends one).
class CString {
 public:
  explicit CString(WireReader& in) : present_(in.get_bool()) {
    if (!present_) return;
    text_ = std::string(in.get_string(kMaxArgumentBytes));
    if (text_.find('\0') != std::string::npos) {
      raise(ErrorKind::kInvalidInput, "a string argument holds a NUL byte");
    }
  }
  const char* ptr() const { return present_ ? text_.c_str() : nullptr; }

 private:
  bool present_;
  std::string text_;
};

}  // namespace gvirtus::marshal

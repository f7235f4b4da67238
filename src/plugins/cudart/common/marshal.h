// How cudart call arguments travel, shared by the stub and the backend handlers that
// tools/gen/gen_calls.py generates from cudart_calls.txt.
//
// Values: integers and enums as fixed-width little-endian integers, pointers and handles as u64
// (device pointers, streams and events are the backend's values, passed through opaquely), floats
// and plain structs (cudaDeviceProp) as their bytes - both ends are x86-64 Linux, the only ABI a
// CUDA 13 application and backend can have. Outputs travel as (present flag, value) both ways, so
// a null output pointer stays null for the real runtime and an output the runtime does not write
// stays as the caller left it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/error.h"
#include "common/wire.h"
#include "plugins/cudart/common/enum_range.h"

namespace gvirtus::cudart {

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
// itself (cudaErrorInvalidValue), so only a hostile peer sends one.
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

// An output parameter on the backend: holds the value the real runtime writes into.
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

}  // namespace gvirtus::cudart

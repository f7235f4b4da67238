// The fixed-layout part of a hand-written ("custom") request or reply, described once: a plain
// struct and the list of its fields, in wire order, as pointers to members:
//
//   struct MemcpyRequest {
//     void* dst; const void* src; uint64_t count; cudaMemcpyKind kind; cudaStream_t stream;
//     static constexpr auto kFields = std::tuple{&MemcpyRequest::dst, &MemcpyRequest::src, ...};
//   };
//
// put_record and get_record are its two sides, field by field with the marshalling of generated
// calls (common/call_marshal.h): pointers and handles as u64, enums as their bits - one outside
// the enum's range is malformed input - integers as themselves, plain structs as their bytes.
// What varies in length (data, blobs, strings) follows the record on the wire, as its header
// says; so the stub and the backend share one definition of every layout.
#pragma once

#include <tuple>
#include <type_traits>

#include "common/call_marshal.h"
#include "common/wire.h"

namespace gvirtus {

template <typename Record>
void put_record(WireWriter& out, const Record& record) {
  std::apply([&](auto... field) { (marshal::put_value(out, record.*field), ...); },
             Record::kFields);
}

// Throws Error{kInvalidInput} for a truncated record or an enum out of range.
template <typename Record>
Record get_record(WireReader& in) {
  Record record{};
  std::apply(
      [&](auto... field) {
        ((record.*field = marshal::get_value<std::remove_cvref_t<decltype(record.*field)>>(in)),
         ...);
      },
      Record::kFields);
  return record;
}

}  // namespace gvirtus

// A small, strict JSON parser (RFC 8259) for configuration files.
//
// Strict because a configuration typo must become an error, never a silent default: trailing
// garbage, duplicate keys, comments, NaN/Infinity, invalid escapes, raw control characters and
// invalid UTF-8 are all rejected, and nesting is bounded (kMaxJsonDepth) so hostile input cannot
// exhaust the stack. Every value remembers where it started, so callers can point at it:
//
//   JsonValue doc = parse_json(text, "/etc/gvirtus/properties.json");
//   if (const JsonValue* port = doc.find("port"); port && !port->as_uint64()) { ... }
//
// Errors are gvirtus::Error{kInvalidInput, "<source>:<line>:<col>: <what>"}; no other exception
// escapes parse_json (short of std::bad_alloc). Values are immutable once parsed and copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gvirtus {

// Arrays and objects may nest this deep; one more level is an error.
inline constexpr int kMaxJsonDepth = 64;

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;  // null, at line 0, column 0 (i.e. not from a document)

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }

  // The typed accessors throw Error{kInvalidInput} when the value has another kind; callers that
  // want their own message check is_*() first.
  bool as_bool() const;
  double as_double() const;  // any number, possibly rounded
  const std::string& as_string() const;

  // True when the number was written as an integer literal (no fraction, no exponent) that fits in
  // uint64 or int64; then as_uint64()/as_int64() give it exactly.
  bool is_integer() const { return kind_ == Kind::kNumber && integer_; }
  // The exact value of an integer literal in range, otherwise nullopt (also for other kinds).
  std::optional<uint64_t> as_uint64() const;
  std::optional<int64_t> as_int64() const;

  // Elements of an array or members of an object, in document order; 0 for other kinds.
  size_t size() const { return items_.size(); }
  // Element i of an array, or the value of member i of an object. Throws Error when out of range.
  const JsonValue& at(size_t i) const;
  const JsonValue& operator[](size_t i) const { return at(i); }
  // Key of member i of an object. Throws Error when not an object or out of range.
  const std::string& key(size_t i) const;
  // The member named `key` of an object, or nullptr (also when this is not an object).
  const JsonValue* find(std::string_view key) const;

  // Where the value started in its source, 1-based; column counts characters, not bytes.
  int line() const { return line_; }
  int column() const { return column_; }

  // A short rendering for messages: null, true, 42 (as written), "abc" (escaped, shortened when
  // long), an array, an empty array, an object, an empty object.
  std::string describe() const;

 private:
  friend class JsonParser;

  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  bool integer_ = false;    // an integer literal that fits in uint64 or int64
  bool negative_ = false;   // with integer_: the literal had a minus sign
  uint64_t magnitude_ = 0;  // with integer_: the absolute value
  double number_ = 0;
  std::string text_;               // a string's value, or a number's literal as written
  std::vector<std::string> keys_;  // object member keys, parallel to items_
  std::vector<JsonValue> items_;   // array elements or object member values
  int line_ = 0;
  int column_ = 0;
};

// Parses one complete JSON document; `source_name` prefixes every error message.
JsonValue parse_json(std::string_view text, std::string_view source_name);

}  // namespace gvirtus

#include "common/json.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <set>
#include <utility>

#include "common/error.h"

namespace gvirtus {

namespace {

// Long strings and number literals are shortened in messages so that one bad value cannot flood a
// log line.
constexpr size_t kDescribeMax = 40;

// JSON's one-character escapes and the characters they stand for, in the same order.
constexpr std::string_view kEscapeLetters = "\"\\/bfnrt";
constexpr std::string_view kEscapedChars = "\"\\/\b\f\n\r\t";

// Quotes a string for a message, escaped so that the message stays on one printable line.
std::string escape_for_message(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == kDescribeMax) return out + "...\"";
    const char c = s[i];
    const size_t e = kEscapedChars.find(c);
    if (e != std::string_view::npos && c != '/') {
      out += '\\';
      out += kEscapeLetters[e];
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void append_utf8(std::string& out, uint32_t cp) {
  static constexpr unsigned char kLeadBits[] = {0x00, 0xC0, 0xE0, 0xF0};
  const int extra = cp < 0x80 ? 0 : cp < 0x800 ? 1 : cp < 0x10000 ? 2 : 3;
  out += static_cast<char>(kLeadBits[extra] | (cp >> (6 * extra)));
  for (int shift = 6 * (extra - 1); shift >= 0; shift -= 6) {
    out += static_cast<char>(0x80 | ((cp >> shift) & 0x3F));
  }
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

[[noreturn]] void wrong_kind(const JsonValue& v, std::string_view expected) {
  raise(ErrorKind::kInvalidInput, "JSON value at line " + std::to_string(v.line()) + ", column " +
                                      std::to_string(v.column()) + ": expected " +
                                      std::string(expected) + ", got " + v.describe());
}

}  // namespace

// Recursive descent over the whole text; the depth bound keeps the recursion (and so the stack)
// bounded whatever the input.
class JsonParser {
 public:
  JsonParser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  JsonValue parse_document() {
    // Some editors start UTF-8 files with a byte order mark; it carries no meaning.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    skip_whitespace();
    JsonValue value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("expected end of input after the value, found " + found());
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { fail_at(line_, column_, what); }
  [[noreturn]] void fail_at(int line, int column, const std::string& what) const {
    raise(ErrorKind::kInvalidInput, std::string(source_) + ":" + std::to_string(line) + ":" +
                                        std::to_string(column) + ": " + what);
  }

  // The character at the current position, for "found ..." in messages.
  std::string found() const {
    if (pos_ >= text_.size()) return "end of input";
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    char buf[24];
    if (c < 0x20 || c >= 0x7F) {
      std::snprintf(buf, sizeof buf, "byte 0x%02X", c);
    } else {
      std::snprintf(buf, sizeof buf, "'%c'", c);
    }
    return buf;
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  // Consumes one byte, keeping line and column current. UTF-8 continuation bytes do not start a
  // character, so they do not advance the column.
  char next() {
    const char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++column_;
    }
    return c;
  }

  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      next();
    }
  }

  void expect(char c, std::string_view what) {
    if (peek() != c) fail("expected " + std::string(what) + ", found " + found());
    next();
  }

  JsonValue start_value(JsonValue::Kind kind) const {
    JsonValue v;
    v.kind_ = kind;
    v.line_ = line_;
    v.column_ = column_;
    return v;
  }

  JsonValue parse_value(int depth) {
    if (at_end()) fail("expected a value, found end of input");
    const char c = peek();
    if (c == '{' || c == '[') {
      if (depth >= kMaxJsonDepth) {
        fail("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      }
      return c == '{' ? parse_object(depth + 1) : parse_array(depth + 1);
    }
    if (c == '"') {
      JsonValue v = start_value(JsonValue::Kind::kString);
      v.text_ = parse_string();
      return v;
    }
    if (c == '-' || is_digit(c)) return parse_number();
    return parse_word();
  }

  // true, false, null; anything else (NaN, Infinity, a bare word) is named in the message.
  JsonValue parse_word() {
    size_t end = pos_;
    while (end < text_.size() && end - pos_ < kDescribeMax &&
           ((text_[end] >= 'a' && text_[end] <= 'z') || (text_[end] >= 'A' && text_[end] <= 'Z'))) {
      ++end;
    }
    const std::string_view word = text_.substr(pos_, end - pos_);
    JsonValue v = start_value(JsonValue::Kind::kNull);
    if (word == "true" || word == "false") {
      v.kind_ = JsonValue::Kind::kBool;
      v.bool_ = word == "true";
    } else if (word != "null") {
      if (word.empty()) fail("expected a value, found " + found());
      fail("expected a value, found '" + std::string(word) + "'" +
           (word == "NaN" || word == "Infinity" ? " (not allowed in JSON)" : ""));
    }
    while (pos_ < end) next();
    return v;
  }

  JsonValue parse_number() {
    JsonValue v = start_value(JsonValue::Kind::kNumber);
    const size_t start = pos_;
    if (peek() == '-') next();
    if (!is_digit(peek())) fail("expected a digit after '-', found " + found());
    const size_t int_start = pos_;
    if (peek() == '0') {
      next();
      if (is_digit(peek())) fail("leading zeros are not allowed in numbers");
    }
    while (is_digit(peek())) next();
    const size_t int_end = pos_;
    if (peek() == '.') {
      next();
      if (!is_digit(peek())) fail("expected a digit after '.', found " + found());
      while (is_digit(peek())) next();
    }
    if (peek() == 'e' || peek() == 'E') {
      next();
      if (peek() == '+' || peek() == '-') next();
      if (!is_digit(peek())) fail("expected a digit in the exponent, found " + found());
      while (is_digit(peek())) next();
    }
    const std::string_view literal = text_.substr(start, pos_ - start);
    // from_chars ignores the locale, unlike strtod.
    const auto [ptr, ec] =
        std::from_chars(literal.data(), literal.data() + literal.size(), v.number_);
    if (ec != std::errc() || ptr != literal.data() + literal.size()) {
      fail_at(v.line_, v.column_,
              "number " + std::string(literal.substr(0, kDescribeMax)) + " is out of range");
    }
    v.text_ = literal;
    if (int_end == pos_) {  // no fraction, no exponent: keep the exact integer when it fits
      v.negative_ = text_[start] == '-';
      const auto r =
          std::from_chars(text_.data() + int_start, text_.data() + int_end, v.magnitude_);
      v.integer_ = r.ec == std::errc() && (!v.negative_ || v.magnitude_ <= (uint64_t{1} << 63));
    }
    return v;
  }

  uint32_t parse_hex4() {
    const char* begin = text_.data() + pos_;
    for (int i = 0; i < 4; ++i) {
      // isxdigit is the same in every locale.
      if (!std::isxdigit(static_cast<unsigned char>(peek()))) {
        fail("expected 4 hex digits after \\u, found " + found());
      }
      next();
    }
    uint32_t value = 0;
    std::from_chars(begin, begin + 4, value, 16);
    return value;
  }

  // After a backslash and 'u': one code point, combining a UTF-16 surrogate pair.
  uint32_t parse_unicode_escape() {
    const uint32_t unit = parse_hex4();
    if (unit >= 0xDC00 && unit <= 0xDFFF) fail("unpaired low surrogate in \\u escape");
    if (unit < 0xD800 || unit > 0xDBFF) return unit;
    if (peek() != '\\' || pos_ + 1 >= text_.size() || text_[pos_ + 1] != 'u') {
      fail("expected \\u and a low surrogate after a high surrogate, found " + found());
    }
    next();
    next();
    const uint32_t low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail("expected a low surrogate (\\uDC00-\\uDFFF)");
    return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }

  // Copies one UTF-8 encoded character, rejecting overlong forms, surrogates and values past
  // U+10FFFF, so that every string we hand out is valid UTF-8.
  void copy_utf8(std::string& out) {
    const unsigned char lead = static_cast<unsigned char>(peek());
    int extra;
    uint32_t cp;
    if (lead >= 0xC2 && lead <= 0xDF) {
      extra = 1, cp = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      extra = 2, cp = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      extra = 3, cp = lead & 0x07;
    } else {
      fail("invalid UTF-8 in string: unexpected " + found());
    }
    const size_t start = pos_;
    next();
    for (int i = 0; i < extra; ++i) {
      if ((static_cast<unsigned char>(peek()) & 0xC0) != 0x80) {
        fail("invalid UTF-8 in string: expected a continuation byte, found " + found());
      }
      cp = (cp << 6) | (static_cast<unsigned char>(next()) & 0x3F);
    }
    const uint32_t min = extra == 1 ? 0x80 : extra == 2 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      fail("invalid UTF-8 in string: bad sequence");
    }
    out.append(text_.substr(start, pos_ - start));
  }

  std::string parse_string() {
    expect('"', "'\"'");
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string, found end of input");
      const unsigned char c = static_cast<unsigned char>(peek());
      if (c == '"') break;
      if (c < 0x20) fail("control character " + found() + " in string (use an escape)");
      if (c >= 0x80) {
        copy_utf8(out);
        continue;
      }
      next();
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (at_end()) fail("unterminated string, found end of input");
      const char e = peek();
      if (e == 'u') {
        next();
        append_utf8(out, parse_unicode_escape());
        continue;
      }
      const size_t index = kEscapeLetters.find(e);
      if (index == std::string_view::npos) fail("invalid escape \\" + found() + " in string");
      out += kEscapedChars[index];
      next();
    }
    next();
    return out;
  }

  JsonValue parse_array(int depth) {
    JsonValue v = start_value(JsonValue::Kind::kArray);
    next();  // '['
    skip_whitespace();
    if (peek() == ']') {
      next();
      return v;
    }
    while (true) {
      skip_whitespace();
      v.items_.push_back(parse_value(depth));
      skip_whitespace();
      if (peek() == ']') break;
      expect(',', "',' or ']' in array");
    }
    next();
    return v;
  }

  JsonValue parse_object(int depth) {
    JsonValue v = start_value(JsonValue::Kind::kObject);
    next();  // '{'
    skip_whitespace();
    if (peek() == '}') {
      next();
      return v;
    }
    std::set<std::string, std::less<>> seen;  // a set keeps big objects O(n log n)
    while (true) {
      skip_whitespace();
      if (peek() != '"') fail("expected a string key in object, found " + found());
      const int key_line = line_, key_column = column_;
      std::string key = parse_string();
      if (!seen.insert(key).second) {
        fail_at(key_line, key_column, "duplicate key " + escape_for_message(key));
      }
      skip_whitespace();
      expect(':', "':' after object key");
      skip_whitespace();
      v.items_.push_back(parse_value(depth));
      v.keys_.push_back(std::move(key));
      skip_whitespace();
      if (peek() == '}') break;
      expect(',', "',' or '}' in object");
    }
    next();
    return v;
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

JsonValue parse_json(std::string_view text, std::string_view source_name) {
  return JsonParser(text, source_name).parse_document();
}

bool JsonValue::as_bool() const {
  if (!is_bool()) wrong_kind(*this, "a boolean");
  return bool_;
}

double JsonValue::as_double() const {
  if (!is_number()) wrong_kind(*this, "a number");
  return number_;
}

const std::string& JsonValue::as_string() const {
  if (!is_string()) wrong_kind(*this, "a string");
  return text_;
}

std::optional<uint64_t> JsonValue::as_uint64() const {
  if (!is_integer() || (negative_ && magnitude_ != 0)) return std::nullopt;
  return magnitude_;
}

std::optional<int64_t> JsonValue::as_int64() const {
  if (!is_integer()) return std::nullopt;
  if (negative_) return static_cast<int64_t>(0 - magnitude_);  // magnitude_ <= 2^63 here
  if (magnitude_ > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(magnitude_);
}

const JsonValue& JsonValue::at(size_t i) const {
  if (i >= items_.size()) {
    wrong_kind(*this, "an array or object with more than " + std::to_string(i) + " entries");
  }
  return items_[i];
}

const std::string& JsonValue::key(size_t i) const {
  if (!is_object() || i >= keys_.size()) {
    wrong_kind(*this, "an object with more than " + std::to_string(i) + " members");
  }
  return keys_[i];
}

const JsonValue* JsonValue::find(std::string_view key) const {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &items_[i];
  }
  return nullptr;
}

std::string JsonValue::describe() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return bool_ ? "true" : "false";
    case Kind::kNumber:
      return text_.size() <= kDescribeMax ? text_ : text_.substr(0, kDescribeMax) + "...";
    case Kind::kString:
      return escape_for_message(text_);
    case Kind::kArray:
      return items_.empty() ? "an empty array" : "an array";
    case Kind::kObject:
      return items_.empty() ? "an empty object" : "an object";
  }
  return "a value";
}

}  // namespace gvirtus

#include "json_out.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "common/error.h"

namespace gvirtus::bench {

JsonWriter& JsonWriter::begin_object(Layout layout) {
  open('{', layout);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  close('}');
  return *this;
}

JsonWriter& JsonWriter::begin_array(Layout layout) {
  open('[', layout);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close(']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  out_ += json_quote(name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ += json_quote(text);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return null();
  before_value();
  // %.6g keeps results short; benchmark numbers carry no more meaningful digits than that.
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", number);
  out_ += text;
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (!level.empty) out_ += level.inline_layout ? ", " : ",";
  level.empty = false;
  if (!level.inline_layout) newline_indent();
}

void JsonWriter::open(char bracket, Layout layout) {
  before_value();
  out_ += bracket;
  // Everything inside an inline container stays inline, whatever its children ask for.
  const bool parent_inline = !levels_.empty() && levels_.back().inline_layout;
  levels_.push_back({layout == kInline || parent_inline});
}

void JsonWriter::close(char bracket) {
  const Level level = levels_.back();
  levels_.pop_back();
  if (!level.empty && !level.inline_layout) newline_indent();
  out_ += bracket == '}' ? '}' : ']';
  if (levels_.empty()) out_ += '\n';
}

void JsonWriter::newline_indent() {
  out_ += '\n';
  out_.append(2 * levels_.size(), ' ');
}

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file) file.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (file) file.close();
  if (!file) raise_errno("cannot write " + path, errno != 0 ? errno : EIO);
}

}  // namespace gvirtus::bench

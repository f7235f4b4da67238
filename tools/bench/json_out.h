// A minimal JSON writer for benchmark results, written by hand so the bench needs no library.
//
//   JsonWriter out;
//   out.begin_object().key("mode").value("comm").key("points").begin_array();
//   out.begin_object(JsonWriter::kInline).key("bytes").value(uint64_t{1}).end_object();
//   out.end_array().end_object();
//   write_file("/tmp/comm.json", out.str());
//
// Containers are indented two spaces per level, except those opened kInline, which stay on one
// line (one benchmark point per line keeps result files readable and diffable). The writer
// trusts its caller to balance begin/end and to put a key before every object member.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gvirtus::bench {

class JsonWriter {
 public:
  enum Layout { kIndented, kInline };

  JsonWriter& begin_object(Layout layout = kIndented);
  JsonWriter& end_object();
  JsonWriter& begin_array(Layout layout = kIndented);
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);  // NaN and infinities become null: JSON has neither
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();

  // The document so far, with a final newline once the outermost container is closed.
  const std::string& str() const { return out_; }

 private:
  struct Level {
    bool inline_layout;
    bool empty = true;
  };

  // Writes the separator and indentation that precede a value (nothing right after a key).
  void before_value();
  void open(char bracket, Layout layout);
  void close(char bracket);
  void newline_indent();

  std::string out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

// Writes `text` to `path` (replacing it). Throws gvirtus::Error{kFailed} naming the path.
void write_file(const std::string& path, const std::string& text);

}  // namespace gvirtus::bench

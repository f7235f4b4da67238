#include "ptx_params.h"

#include <charconv>
#include <set>
#include <string>

#include "bounded.h"

namespace gvirtus::fatbin {
namespace {

// The PTX parameter space is 32 KiB; this bounds the arithmetic on hostile numbers far above it.
constexpr uint64_t kMaxParamBytes = 1 << 20;

// Splits PTX into tokens: punctuation ( ) [ ] , ; { } alone, other runs up to whitespace.
// Comments are skipped. Returns an empty view at the end.
class Tokens {
 public:
  explicit Tokens(std::string_view text) : text_(text) {}

  std::string_view next() {
    skip_space_and_comments();
    if (at_ >= text_.size()) return {};
    const size_t start = at_;
    if (is_punct(text_[at_])) return text_.substr(at_++, 1);
    while (at_ < text_.size() && !is_space(text_[at_]) && !is_punct(text_[at_]) &&
           !text_.substr(at_).starts_with("//") && !text_.substr(at_).starts_with("/*")) {
      ++at_;
    }
    return text_.substr(start, at_ - start);
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || !c; }
  static bool is_punct(char c) {
    return std::string_view("()[],;{}").find(c) != std::string_view::npos;
  }

  void skip_space_and_comments() {
    while (at_ < text_.size()) {
      const auto rest = text_.substr(at_);
      if (is_space(rest[0])) {
        ++at_;
      } else if (rest.starts_with("//")) {
        const size_t eol = rest.find('\n');
        at_ = eol == std::string_view::npos ? text_.size() : at_ + eol;
      } else if (rest.starts_with("/*")) {
        const size_t end = rest.find("*/", 2);
        at_ = end == std::string_view::npos ? text_.size() : at_ + end + 2;
      } else {
        return;
      }
    }
  }

  std::string_view text_;
  size_t at_ = 0;
};

uint64_t number(std::string_view token, const std::string& kernel) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc{} || end != token.data() + token.size() || value > kMaxParamBytes) {
    fail("bad number '" + std::string(token) + "' in the parameters of PTX entry " + kernel);
  }
  return value;
}

// Bytes of a PTX fundamental type, 0 for a token that is not one.
uint64_t type_bytes(std::string_view t) {
  if (t == ".b8" || t == ".s8" || t == ".u8") return 1;
  if (t == ".b16" || t == ".s16" || t == ".u16" || t == ".f16" || t == ".bf16") return 2;
  if (t == ".b32" || t == ".s32" || t == ".u32" || t == ".f32" || t == ".f16x2" || t == ".bf16x2")
    return 4;
  if (t == ".b64" || t == ".s64" || t == ".u64" || t == ".f64") return 8;
  if (t == ".b128") return 16;
  return 0;
}

// Reads the rest of `.param [.align N] <type> [.ptr .space .align M] name[[K]]` up to the next ','
// or
// ')', and appends it to the layout. Returns the token that ended it.
std::string_view read_param(Tokens& tokens, KernelLayout& layout, uint64_t& end) {
  uint64_t elem = 0, align = 0, count = 1;
  bool named = false, pointer = false;
  std::string_view t;
  for (t = tokens.next(); !t.empty() && t != "," && t != ")"; t = tokens.next()) {
    if (const uint64_t bytes = type_bytes(t)) {
      elem = bytes;
    } else if (t == ".ptr") {
      pointer = true;  // `.ptr .space .align N`: N is the pointee's alignment, not the param's
    } else if (t == ".align") {
      const uint64_t value = number(tokens.next(), layout.name);
      if (!pointer) align = value;
    } else if (t == "[") {
      count = number(tokens.next(), layout.name);
      if (tokens.next() != "]") fail("PTX entry " + layout.name + ": unclosed array size");
    } else if (t.starts_with(".")) {
      continue;  // the state space of a .ptr, which does not change the layout
    } else {
      named = true;
    }
  }
  if (elem == 0 || !named) fail("PTX entry " + layout.name + ": parameter without type or name");
  if (align == 0) align = elem;
  if ((align & (align - 1)) != 0)
    fail("PTX entry " + layout.name + ": alignment not a power of two");
  const uint64_t offset = (end + align - 1) / align * align;
  end = offset + elem * count;
  if (end > kMaxParamBytes) fail("PTX entry " + layout.name + ": parameters too large");
  layout.params.push_back({static_cast<uint32_t>(offset), static_cast<uint32_t>(elem * count)});
  return t;
}

}  // namespace

std::vector<KernelLayout> ptx_kernel_layouts(std::string_view ptx) {
  std::vector<KernelLayout> layouts;
  std::set<std::string, std::less<>> seen;
  Tokens tokens(ptx);
  for (auto t = tokens.next(); !t.empty(); t = tokens.next()) {
    if (t != ".entry") continue;
    KernelLayout layout{std::string(tokens.next()), {}, 0};
    if (layout.name.empty()) fail("PTX .entry without a name");
    uint64_t end = 0;
    if (tokens.next() == "(") {
      for (auto closer = tokens.next(); closer != ")";) {
        if (closer != ".param") {
          fail("PTX entry " + layout.name + ": expected .param, got '" + std::string(closer) + "'");
        }
        closer = read_param(tokens, layout, end);
        if (closer.empty()) fail("PTX entry " + layout.name + ": unterminated parameter list");
        if (closer == ",") closer = tokens.next();
      }
    }
    layout.param_bytes = static_cast<uint32_t>(end);
    if (seen.insert(layout.name).second) layouts.push_back(std::move(layout));
  }
  return layouts;
}

}  // namespace gvirtus::fatbin

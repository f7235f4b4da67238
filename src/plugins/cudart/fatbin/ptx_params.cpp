#include "ptx_params.h"

#include <algorithm>
#include <charconv>
#include <functional>
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

  // Moves to just past the next `.entry` token outside comments, or to the end (false). Only '/'
  // can open a comment, so the text between entries is searched, not tokenised: a module's PTX
  // runs to hundreds of MiB of instructions around a few hundred entries.
  bool seek_entry() {
    constexpr std::string_view kEntry = ".entry";
    constexpr size_t kNone = std::string_view::npos;
    static const std::boyer_moore_horspool_searcher entry_searcher(kEntry.begin(), kEntry.end());
    // Each search runs ahead once: an ".entry" (or a slash) found past `at_` stays valid until
    // `at_` passes it, across calls, so the text is searched in one pass however many entries
    // and comments it holds (tokens only move `at_` forward).
    while (at_ < text_.size()) {
      if (!candidate_known_ || (candidate_ != kNone && candidate_ < at_)) {
        // Not string_view::find, which stops at every '.', and PTX is mostly dots.
        const auto found = std::search(text_.begin() + at_, text_.end(), entry_searcher);
        candidate_ = found == text_.end() ? kNone : static_cast<size_t>(found - text_.begin());
        candidate_known_ = true;
      }
      if (!slash_known_ || (slash_ != kNone && slash_ < at_)) {
        slash_ = text_.find('/', at_);
        slash_known_ = true;
      }
      if (slash_ < candidate_) {
        at_ = slash_;
        skip_space_and_comments();
        if (at_ == slash_) ++at_;  // a lone '/', not a comment
        continue;
      }
      if (candidate_ == kNone) break;
      at_ = candidate_ + kEntry.size();
      const bool starts =
          candidate_ == 0 || is_space(text_[candidate_ - 1]) || is_punct(text_[candidate_ - 1]);
      const bool ends =
          at_ == text_.size() || is_space(text_[at_]) || is_punct(text_[at_]) || text_[at_] == '/';
      if (starts && ends) return true;
    }
    at_ = text_.size();
    return false;
  }

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
    switch (c) {
      case '(':
      case ')':
      case '[':
      case ']':
      case ',':
      case ';':
      case '{':
      case '}':
        return true;
      default:
        return false;
    }
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
  // seek_entry's searches ahead: where the next ".entry" and '/' were found (npos: none left).
  size_t candidate_ = std::string_view::npos, slash_ = std::string_view::npos;
  bool candidate_known_ = false, slash_known_ = false;
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
  while (tokens.seek_entry()) {
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

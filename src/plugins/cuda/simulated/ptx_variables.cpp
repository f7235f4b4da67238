#include "ptx_variables.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace gvirtus::sim {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// The words of one statement up to its name's dimensions: split at spaces, '[' and ']' kept apart.
std::vector<std::string_view> words(std::string_view statement) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < statement.size()) {
    while (at < statement.size() && is_space(statement[at])) ++at;
    if (at == statement.size()) break;
    if (statement[at] == '[' || statement[at] == ']' || statement[at] == '=') {
      out.push_back(statement.substr(at, 1));
      ++at;
      continue;
    }
    const size_t start = at;
    while (at < statement.size() && !is_space(statement[at]) && statement[at] != '[' &&
           statement[at] != ']' && statement[at] != '=') {
      ++at;
    }
    out.push_back(statement.substr(start, at - start));
  }
  return out;
}

// The bytes of a scalar type (.b8 ... .f64, .pred is not storable), 0 for anything else.
uint64_t type_bytes(std::string_view type) {
  if (type.size() < 3 || type[0] != '.') return 0;
  const char kind = type[1];
  if (kind != 'b' && kind != 'u' && kind != 's' && kind != 'f') return 0;
  unsigned bits = 0;
  const auto [end, error] = std::from_chars(type.data() + 2, type.data() + type.size(), bits);
  if (error != std::errc() || end != type.data() + type.size()) return 0;
  return bits == 8 || bits == 16 || bits == 32 || bits == 64 ? bits / 8 : 0;
}

// A number of an initializer as the `bytes` little-endian bytes of an element whose type is
// `type` (.f32, .f64 or an integer type); false for anything else.
bool encode_number(std::string_view text, std::string_view type, size_t bytes, std::byte* out) {
  if (text.empty()) return false;
  uint64_t bits = 0;
  const bool floating = type.starts_with(".f");
  if ((text.starts_with("0f") || text.starts_with("0F")) && text.size() == 10) {
    const auto [end, error] = std::from_chars(text.data() + 2, text.data() + 10, bits, 16);
    if (error != std::errc() || end != text.data() + 10) return false;
  } else if ((text.starts_with("0d") || text.starts_with("0D")) && text.size() == 18) {
    const auto [end, error] = std::from_chars(text.data() + 2, text.data() + 18, bits, 16);
    if (error != std::errc() || end != text.data() + 18) return false;
  } else if (floating) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return false;
    if (bytes == 4) {
      const auto narrow = static_cast<float>(value);
      uint32_t word = 0;
      std::memcpy(&word, &narrow, sizeof word);
      bits = word;
    } else {
      std::memcpy(&bits, &value, sizeof bits);
    }
  } else {
    const bool negative = text.front() == '-';
    std::string_view digits = negative ? text.substr(1) : text;
    int base = 10;
    if (digits.starts_with("0x") || digits.starts_with("0X")) {
      base = 16;
      digits.remove_prefix(2);
    }
    if (!digits.empty() && (digits.back() == 'U' || digits.back() == 'u')) digits.remove_suffix(1);
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), bits, base);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
      return false;
    }
    if (negative) bits = ~bits + 1;  // two's complement, cut to the element below
  }
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xff);
  return true;
}

// An initializer's bytes (`text`: what follows '=' up to ';') for a variable of `bytes` bytes
// whose elements are of `type`; empty when it is not numbers alone (or holds too many).
std::vector<std::byte> initial_bytes(std::string_view text, std::string_view type, uint64_t bytes) {
  const size_t element = type_bytes(type);
  std::vector<std::byte> out;
  if (element == 0 || bytes == 0) return out;
  out.reserve(static_cast<size_t>(std::min<uint64_t>(bytes, 1 << 20)));
  size_t at = 0;
  while (at < text.size()) {
    const char c = text[at];
    if (is_space(c) || c == '{' || c == '}' || c == ',') {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() && !is_space(text[end]) && text[end] != ',' && text[end] != '}' &&
           text[end] != '{') {
      ++end;
    }
    if (out.size() + element > bytes) return {};
    out.resize(out.size() + element);
    if (!encode_number(text.substr(at, end - at), type, element,
                       out.data() + out.size() - element)) {
      return {};
    }
    at = end;
  }
  return out;
}

}  // namespace

std::vector<fatbin::Variable> ptx_variables(std::string_view ptx) {
  std::map<std::string, fatbin::Variable> found;
  size_t at = 0;
  while (at < ptx.size()) {
    size_t end = ptx.find('\n', at);
    if (end == std::string_view::npos) end = ptx.size();
    std::string_view line = ptx.substr(at, end - at);
    at = end + 1;
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    // Module-scope declarations start their line (nvcc writes each on one).
    if (!line.starts_with(".visible") && !line.starts_with(".weak") &&
        !line.starts_with(".global") && !line.starts_with(".const")) {
      continue;
    }
    const auto w = words(line.substr(0, line.find(';')));
    size_t i = 0;
    while (i < w.size() && (w[i] == ".visible" || w[i] == ".weak")) ++i;
    if (i == w.size() || (w[i] != ".global" && w[i] != ".const")) continue;
    ++i;
    // `.attribute(.managed)`: a managed variable is a module variable like any other.
    if (i < w.size() && w[i].starts_with(".attribute(")) ++i;
    if (i + 1 < w.size() && w[i] == ".align") i += 2;
    uint64_t lanes = 1;
    if (i < w.size() && (w[i] == ".v2" || w[i] == ".v4" || w[i] == ".v8")) {
      lanes = static_cast<uint64_t>(w[i][2] - '0');
      ++i;
    }
    if (i + 1 >= w.size()) continue;
    const std::string_view type = w[i];
    uint64_t bytes = type_bytes(w[i]) * lanes;
    if (bytes == 0) continue;  // .texref, .surfref, .samplerref, a function, ...
    const std::string_view name = w[i + 1];
    i += 2;
    bool sound = true;
    while (sound && i + 2 < w.size() && w[i] == "[") {
      uint64_t count = 0;
      const auto [end_digits, error] =
          std::from_chars(w[i + 1].data(), w[i + 1].data() + w[i + 1].size(), count);
      sound = error == std::errc() && end_digits == w[i + 1].data() + w[i + 1].size() &&
              w[i + 2] == "]";
      bytes *= count;
      i += 3;
    }
    if (!sound || name.empty()) continue;
    fatbin::Variable variable{std::string(name), bytes, {}};
    const std::string_view statement = line.substr(0, line.find(';'));
    if (const size_t equals = statement.find('='); equals != std::string_view::npos) {
      variable.initial = initial_bytes(statement.substr(equals + 1), type, bytes);
    }
    found.emplace(variable.name, std::move(variable));
  }
  std::vector<fatbin::Variable> out;
  for (auto& [name, variable] : found) out.push_back(std::move(variable));
  return out;
}

}  // namespace gvirtus::sim

#include "ptx_variables.h"

#include <charconv>
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

}  // namespace

std::map<std::string, uint64_t> ptx_variables(std::string_view ptx) {
  std::map<std::string, uint64_t> found;
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
    if (sound && !name.empty()) found.emplace(std::string(name), bytes);
  }
  return found;
}

}  // namespace gvirtus::sim

// Small text helpers for tests that read logs and program output.
#pragma once

#include <cstddef>
#include <string>

namespace gvirtus::testing {

// How many times `what` occurs in `text` (overlapping occurrences count).
inline size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace gvirtus::testing

// A library's error names and texts as a table (the stubs answer cudaGetErrorName/String and
// cuGetErrorName/String locally, from tables generated at build time), and its lookup.
#pragma once

#include <cstddef>

namespace gvirtus {

struct ErrorText {
  int code;
  const char* name;
  const char* text;
};

// The entry for `code`, or null when the table has none.
template <size_t N>
constexpr const ErrorText* find_error(const ErrorText (&table)[N], int code) {
  for (const ErrorText& e : table) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

}  // namespace gvirtus

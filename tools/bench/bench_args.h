// Command-line helpers shared by the gvirtus-bench modes.
//
// A mode reports bad usage by throwing UsageError; main() prints it with a hint and exits 2,
// while a gvirtus::Error from the system under test exits 1.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gvirtus::bench {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A byte count: decimal digits with an optional binary suffix K, M or G ("64M" = 64 MiB).
// Throws UsageError naming `option` unless the value lies in [low, high].
uint64_t parse_bytes(std::string_view option, std::string_view text, uint64_t low, uint64_t high);

// A plain decimal count in [low, high]; throws UsageError naming `option` otherwise.
uint64_t parse_count(std::string_view option, std::string_view text, uint64_t low, uint64_t high);

// "64 MiB", "1000 B", "48 KiB": a size for tables and messages.
std::string format_bytes(uint64_t bytes);

}  // namespace gvirtus::bench

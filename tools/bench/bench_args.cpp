#include "bench_args.h"

#include <charconv>

namespace gvirtus::bench {
namespace {

[[noreturn]] void bad_value(std::string_view option, std::string_view text, std::string_view what) {
  throw UsageError(std::string(option) + ": expected " + std::string(what) + ", got \"" +
                   std::string(text) + "\"");
}

std::string range(uint64_t low, uint64_t high) {
  return std::to_string(low) + ".." + std::to_string(high);
}

}  // namespace

uint64_t parse_bytes(std::string_view option, std::string_view text, uint64_t low, uint64_t high) {
  const std::string what = "a byte count in " + range(low, high) + " (suffixes K, M, G allowed)";
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) bad_value(option, text, what);
  std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
  int shift = 0;
  if (suffix == "K" || suffix == "k" || suffix == "KiB")
    shift = 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB")
    shift = 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB")
    shift = 30;
  else if (!suffix.empty())
    bad_value(option, text, what);
  if (shift > 0 && value > (high >> shift)) bad_value(option, text, what);
  value <<= shift;
  if (value < low || value > high) bad_value(option, text, what);
  return value;
}

uint64_t parse_count(std::string_view option, std::string_view text, uint64_t low, uint64_t high) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    bad_value(option, text, "a whole number in " + range(low, high));
  }
  return value;
}

std::string format_bytes(uint64_t bytes) {
  // Exact binary multiples read best as KiB/MiB; anything else (1000, 1500) stays in bytes.
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace gvirtus::bench

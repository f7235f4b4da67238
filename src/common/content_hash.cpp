#include "common/content_hash.h"

#include <openssl/sha.h>

namespace gvirtus {

ContentHash content_hash(std::span<const std::byte> bytes) {
  ContentHash hash;
  ::SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
           reinterpret_cast<unsigned char*>(hash.data()));
  return hash;
}

std::string to_hex(const ContentHash& hash) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * hash.size());
  for (const std::byte b : hash) {
    text += kDigits[std::to_integer<unsigned>(b) >> 4];
    text += kDigits[std::to_integer<unsigned>(b) & 15];
  }
  return text;
}

std::optional<ContentHash> hash_from_hex(std::string_view text) {
  ContentHash hash;
  if (text.size() != 2 * hash.size()) return std::nullopt;
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < hash.size(); ++i) {
    const int high = digit(text[2 * i]), low = digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    hash[i] = static_cast<std::byte>(high << 4 | low);
  }
  return hash;
}

}  // namespace gvirtus

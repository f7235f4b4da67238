// The content hash that names a module image everywhere it is kept or asked for: SHA-256 of its
// bytes (libcrypto). Cryptographic on purpose: the backend's module cache is shared by every
// session, so a client able to make two images collide could hand another session's program a
// kernel of its choosing; with SHA-256 it cannot, and an entry whose bytes no longer hash to its
// name is known to be damaged.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gvirtus {

using ContentHash = std::array<std::byte, 32>;

ContentHash content_hash(std::span<const std::byte> bytes);

// 64 lowercase hexadecimal digits, as cache entries are named.
std::string to_hex(const ContentHash& hash);

// The hash 64 hexadecimal digits (either case) spell, or nothing when `text` is anything else.
std::optional<ContentHash> hash_from_hex(std::string_view text);

}  // namespace gvirtus

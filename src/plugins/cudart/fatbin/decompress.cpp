#include "decompress.h"

#include <lz4.h>
#include <zstd.h>

#include <climits>
#include <string>

#include "bounded.h"

namespace gvirtus::fatbin {
namespace {

void check_size(const Entry& entry, const char* algorithm) {
  if (entry.uncompressed_size > kMaxUncompressedBytes) {
    fail(std::string(algorithm) + " entry announces " + std::to_string(entry.uncompressed_size) +
         " uncompressed bytes, above the limit");
  }
}

std::vector<std::byte> lz4(const Entry& entry) {
  check_size(entry, "LZ4");
  static_assert(kMaxUncompressedBytes <= INT_MAX && kMaxFatbinBytes <= uint64_t{INT_MAX} + 1);
  if (entry.payload.size() > INT_MAX) fail("LZ4 entry too large");
  std::vector<std::byte> out(entry.uncompressed_size);
  const int got = LZ4_decompress_safe(
      reinterpret_cast<const char*>(entry.payload.data()), reinterpret_cast<char*>(out.data()),
      static_cast<int>(entry.payload.size()), static_cast<int>(out.size()));
  if (got < 0 || static_cast<uint64_t>(got) != out.size()) {
    fail("corrupt LZ4 entry (decoded " + std::to_string(got) + " of " + std::to_string(out.size()) +
         " bytes)");
  }
  return out;
}

std::vector<std::byte> zstd(const Entry& entry) {
  check_size(entry, "ZSTD");
  std::vector<std::byte> out(entry.uncompressed_size);
  const size_t got =
      ZSTD_decompress(out.data(), out.size(), entry.payload.data(), entry.payload.size());
  if (ZSTD_isError(got)) fail(std::string("corrupt ZSTD entry: ") + ZSTD_getErrorName(got));
  if (got != out.size()) {
    fail("ZSTD entry decoded to " + std::to_string(got) + " bytes, not the announced " +
         std::to_string(out.size()));
  }
  return out;
}

}  // namespace

std::vector<std::byte> entry_bytes(const Entry& entry) {
  const bool is_lz4 = (entry.flags & kFlagCompressedLz4) != 0;
  const bool is_zstd = (entry.flags & kFlagCompressedZstd) != 0;
  if (is_lz4 && is_zstd) fail("entry flagged both LZ4 and ZSTD compressed");
  if (is_lz4) return lz4(entry);
  if (is_zstd) return zstd(entry);
  return {entry.payload.begin(), entry.payload.end()};
}

}  // namespace gvirtus::fatbin

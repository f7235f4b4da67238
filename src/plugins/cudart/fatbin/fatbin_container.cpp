#include "fatbin_container.h"

#include <cstring>
#include <string>

#include "bounded.h"
#include "fatbin.h"

namespace gvirtus::fatbin {

std::span<const std::byte> fatbin_span(std::span<const std::byte> bytes) {
  const auto magic = read_le<uint32_t>(bytes, 0, "fatbin header");
  if (magic != kFatbinMagic) fail("bad fatbin magic " + std::to_string(magic));
  const auto version = read_le<uint16_t>(bytes, 4, "fatbin header");
  const auto header_bytes = read_le<uint16_t>(bytes, 6, "fatbin header");
  const auto entries_bytes = read_le<uint64_t>(bytes, 8, "fatbin header");
  if (version != 1) fail("unsupported fatbin version " + std::to_string(version));
  if (header_bytes < kFatbinHeaderBytes) fail("fatbin header size " + std::to_string(header_bytes));
  if (entries_bytes > kMaxFatbinBytes) fail("fatbin size " + std::to_string(entries_bytes));
  return slice(bytes, 0, header_bytes + entries_bytes, "fatbin entries");
}

std::vector<Entry> fatbin_entries(std::span<const std::byte> fatbin) {
  fatbin = fatbin_span(fatbin);
  std::vector<Entry> entries;
  uint64_t at = read_le<uint16_t>(fatbin, 6, "fatbin header");
  while (at < fatbin.size()) {
    // Field offsets inside an entry header; docs/fatbin.md lists them all.
    const auto header = slice(fatbin, at, kEntryHeaderBytes, "fatbin entry header");
    const auto header_bytes = read_le<uint32_t>(header, 4, "entry header");
    const auto padded_bytes = read_le<uint64_t>(header, 8, "entry header");
    const auto compressed_bytes = read_le<uint32_t>(header, 16, "entry header");
    Entry entry{.kind = read_le<uint16_t>(header, 0, "entry header"),
                .sm_arch = read_le<uint32_t>(header, 28, "entry header"),
                .flags = read_le<uint64_t>(header, 40, "entry header"),
                .uncompressed_size = read_le<uint64_t>(header, 56, "entry header"),
                .payload = {},
                .stored = {}};
    if (header_bytes < kEntryHeaderBytes) {
      fail("entry header size " + std::to_string(header_bytes) + " at " + std::to_string(at));
    }
    const auto whole = slice(fatbin, at + header_bytes, padded_bytes, "fatbin entry payload");
    const bool compressed = (entry.flags & (kFlagCompressedLz4 | kFlagCompressedZstd)) != 0;
    if (compressed && compressed_bytes > padded_bytes) {
      fail("compressed size " + std::to_string(compressed_bytes) + " exceeds the entry's " +
           std::to_string(padded_bytes) + " bytes");
    }
    entry.payload = compressed ? whole.first(compressed_bytes) : whole;
    entry.stored = fatbin.subspan(at, header_bytes + padded_bytes);
    entries.push_back(entry);
    at += header_bytes + padded_bytes;  // cannot overflow: both were checked against the span
  }
  return entries;
}

std::vector<std::byte> fatbin_of_entries(std::span<const std::byte> fatbin,
                                         const std::vector<Entry>& kept) {
  const auto header_bytes = read_le<uint16_t>(fatbin, 6, "fatbin header");
  uint64_t entries_bytes = 0;
  for (const Entry& e : kept) entries_bytes += e.stored.size();
  std::vector<std::byte> out;
  out.reserve(header_bytes + entries_bytes);
  out.insert(out.end(), fatbin.begin(), fatbin.begin() + header_bytes);
  std::memcpy(out.data() + 8, &entries_bytes, sizeof entries_bytes);  // little-endian, as read
  for (const Entry& e : kept) out.insert(out.end(), e.stored.begin(), e.stored.end());
  return out;
}

std::span<const std::byte> fatbin_from_wrapper(const void* wrapper) {
  if (wrapper == nullptr) fail("null fatbin wrapper");
  // {int magic; int version; const unsigned long long* data; void* filename_or_fatbins;}
  struct Wrapper {
    uint32_t magic;
    uint32_t version;
    const std::byte* data;
    const void* filename_or_fatbins;
  };
  Wrapper w;
  std::memcpy(&w, wrapper, sizeof w);
  if (w.magic != kWrapperMagic) fail("bad fatbin wrapper magic " + std::to_string(w.magic));
  if (w.version != 1 && w.version != 2) {
    fail("unsupported fatbin wrapper version " + std::to_string(w.version));
  }
  if (w.data == nullptr) fail("fatbin wrapper without data");
  // The header is readable (it is in the program's image); its size field bounds the rest.
  const std::span<const std::byte> header(w.data, kFatbinHeaderBytes);
  const uint64_t total =
      read_le<uint16_t>(header, 6, "fatbin header") + read_le<uint64_t>(header, 8, "fatbin header");
  if (read_le<uint64_t>(header, 8, "fatbin header") > kMaxFatbinBytes) {
    fail("fatbin size " + std::to_string(total) + " exceeds the limit");
  }
  const auto fatbin = fatbin_span({w.data, total});
  fatbin_entries(fatbin);  // the entries must tile the span exactly
  return fatbin;
}

}  // namespace gvirtus::fatbin

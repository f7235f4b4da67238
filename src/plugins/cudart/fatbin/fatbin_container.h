// The fatbinary container: the wrapper nvcc passes to __cudaRegisterFatBinary, the fatbin header
// and the entries (one PTX text or ELF cubin each) that follow it. Only walks and validates the
// layout; payloads are returned as stored (see decompress.h). Layout facts: docs/fatbin.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gvirtus::fatbin {

inline constexpr uint32_t kWrapperMagic = 0x466243b1;
inline constexpr uint32_t kFatbinMagic = 0xba55ed50;
inline constexpr size_t kFatbinHeaderBytes = 16;
inline constexpr size_t kEntryHeaderBytes = 64;  // the fields we read; newer archs add more
// No real fatbin comes near this; it bounds what a corrupt size field can make us touch.
inline constexpr uint64_t kMaxFatbinBytes = uint64_t{1} << 31;

enum class EntryKind : uint16_t { kPtx = 1, kElf = 2 };

// Entry flag bits (the low bits say 64-bit and host OS; we read only these).
inline constexpr uint64_t kFlagCompressedLz4 = 0x2000;
inline constexpr uint64_t kFlagCompressedZstd = 0x8000;

struct Entry {
  uint16_t kind;                       // EntryKind, others are skipped by callers
  uint32_t sm_arch;                    // e.g. 90; for PTX the virtual arch
  uint64_t flags;                      // kFlagCompressed* and others
  uint64_t uncompressed_size;          // meaningful only when compressed
  std::span<const std::byte> payload;  // as stored: compressed bytes, or plain text/ELF + padding
  std::span<const std::byte> stored;   // the whole entry: its header and padded payload
};

// The fatbin at the start of `bytes`: checks magic, version and header size, and that the
// entries it announces fit; returns [header, end of last entry]. Throws Error{kInvalidInput}.
std::span<const std::byte> fatbin_span(std::span<const std::byte> bytes);

// Every entry of a fatbin (as fatbin_span returns it), in order. Each entry header and payload
// must lie inside the fatbin and the last one must end exactly at its end.
std::vector<Entry> fatbin_entries(std::span<const std::byte> fatbin);

// A fatbin of `fatbin`'s header and the `kept` entries (some of fatbin_entries(fatbin), in order)
// as they are stored, with the header's size of its entries made theirs.
std::vector<std::byte> fatbin_of_entries(std::span<const std::byte> fatbin,
                                         const std::vector<Entry>& kept);

}  // namespace gvirtus::fatbin

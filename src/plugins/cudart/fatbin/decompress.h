// The plain bytes of a fatbin entry. nvcc 13 compresses entries with ZSTD (flag 0x8000: the
// default for PTX, -Xfatbin -compress-all, --compress-mode=size) or LZ4 block format (flag
// 0x2000: --compress-mode=speed); see docs/fatbin.md. Both decoders are the bounds-checked ones
// (LZ4_decompress_safe, ZSTD_decompress into a buffer of exactly the announced size).
#pragma once

#include <cstddef>
#include <vector>

#include "fatbin_container.h"

namespace gvirtus::fatbin {

// Bounds what a hostile uncompressed-size field can make us allocate.
inline constexpr uint64_t kMaxUncompressedBytes = uint64_t{1} << 30;

// The entry's payload, decompressed when its flags say so. Throws Error{kInvalidInput} when the
// data does not decode to exactly the announced size.
std::vector<std::byte> entry_bytes(const Entry& entry);

}  // namespace gvirtus::fatbin

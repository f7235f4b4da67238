// What the cuda plugin checks of a module image from the wire before the driver, which trusts an
// image's headers, reads it (module_checks.cpp): the module loaders' and the linker's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gvirtus::cuda {

// Whether the image is exactly as large as its headers say and parses as what it claims to be
// (a fatbinary or a cubin, by gvirtus's own bounded parsers; PTX is its compiler's to judge). A
// refusal is logged with the parser's reason.
bool image_is_sound(std::span<const std::byte> image);

// A copy in aligned memory of our own: the driver reads an image in place, as a program's.
std::vector<uint64_t> aligned_copy(std::span<const std::byte> image);

}  // namespace gvirtus::cuda

// How many bytes a module image passed by pointer alone (cuModuleLoadData, the runtime's
// fatbinaries) occupies, by its own headers: the driver takes a pointer and finds the size from
// the image, and so must the stub to send it, and so must the backend to know that an image from
// the wire claims no more bytes than arrived (the driver would read past them).
//   - a fatbinary (magic 0xBA55ED50): its header's size plus the size of the entries it frames;
//   - a cubin (an ELF64 image): up to the end of its section or program header table, or of its
//     last section, whichever is furthest;
//   - anything else is PTX text, up to and including its NUL.
// Only the first `readable` bytes are read; headers that run past them, or a size over
// kMaxModuleImageBytes, make the image unreadable (0). The stub passes the limit for `readable`
// (the application's own image is trusted to be as large as its headers say); the backend passes
// what arrived.
#pragma once

#include <cstddef>

namespace gvirtus::cuda {

// What an image is, by its first bytes (of `readable`): a fatbinary, a cubin, or else PTX.
enum class ModuleImageKind { kFatbin, kCubin, kPtx };
ModuleImageKind module_image_kind(const void* image, size_t readable);

// The image's claimed size in bytes, or 0 when it is not a loadable image.
size_t module_image_size(const void* image, size_t readable);

}  // namespace gvirtus::cuda

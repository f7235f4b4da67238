// What the cuda plugin checks before the driver sees a request (request_checks.cpp): a module image
// from the wire, which the driver would trust (the module loaders' and the linker's check), and a
// stream that takes a copy of the client's bytes (the host copies'), a function the driver has.
#pragma once

#include <cuda.h>

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

// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED for a stream in the middle of a capture: it cannot take a
// copy from or to memory of ours, which the graph would read or write when it runs, long after
// the reply has gone.
CUresult not_capturing(CUstream stream);

// CUDA_ERROR_NOT_SUPPORTED when the backend's driver lacks `function` (an older driver), as a
// native program calling it there would be told.
inline CUresult lacks(const void* function) {
  return function != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}
// The same for a function pointer as real() holds it.
template <typename R, typename... Args>
CUresult lacks(R (*function)(Args...)) {
  return lacks(reinterpret_cast<const void*>(function));
}

}  // namespace gvirtus::cuda

// What the stub asks the backend about an array when a copy needs its geometry: the bytes of
// one element, and of one row. The stub keeps no record of arrays; these are round trips, made
// only by copies that must count bytes (chunked 1D copies, 3D copies with a host side, copy nodes
// and captured copies naming an array).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gvirtus::cudart {

// The bytes of one element of `array` (from its channel format) in `element`: 0 when the format
// has no whole-byte element (block-compressed, planar). Returns the backend's answer to
// cudaArrayGetInfo (an array the session does not hold is refused there).
cudaError_t array_element_bytes(cudaArray_const_t array, size_t& element);

// The bytes of one element of `array` for a copy that counts its rows in bytes (a host side's, a
// staged one's): the backend's answer as above, or cudaErrorNotSupported (recorded as the last
// error) for a format without whole-byte elements, whose rows cannot be counted.
cudaError_t countable_element_bytes(cudaArray_const_t array, size_t& element);

// The bytes of one row of `array`, or 0 as above.
size_t array_row_bytes(cudaArray_const_t array);

}  // namespace gvirtus::cudart

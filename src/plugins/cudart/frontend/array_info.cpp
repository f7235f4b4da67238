#include "plugins/cudart/frontend/array_info.h"

#include "plugins/cudart/common/array_wire.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// cudaArrayGetInfo of `array`: its element's bytes and its width, or zeros.
cudaError_t array_geometry(cudaArray_const_t array, size_t& element, size_t& width) {
  element = 0;
  width = 0;
  cudaChannelFormatDesc desc{};
  cudaExtent extent{};
  unsigned flags = 0;
  const cudaError_t rc = cudaArrayGetInfo(&desc, &extent, &flags, const_cast<cudaArray_t>(array));
  if (rc != cudaSuccess) return rc;
  element = channel_element_bytes(desc);
  width = element != 0 ? extent.width : 0;
  return cudaSuccess;
}

}  // namespace

cudaError_t array_element_bytes(cudaArray_const_t array, size_t& element) {
  size_t width = 0;
  return array_geometry(array, element, width);
}

cudaError_t countable_element_bytes(cudaArray_const_t array, size_t& element) {
  if (const cudaError_t rc = array_element_bytes(array, element); rc != cudaSuccess) return rc;
  if (element == 0) return record_local_error(cudaErrorNotSupported);
  return cudaSuccess;
}

size_t array_row_bytes(cudaArray_const_t array) {
  size_t element = 0, width = 0;
  (void)array_geometry(array, element, width);
  return element * width;
}

}  // namespace gvirtus::cudart

// Freeing arrays and mipmapped arrays, and the arrays a parent owns (custom rows 153-156 of
// cudart_calls.txt; the backend's side: backend/arrays.cpp). Requests are the parent's or the
// array's handle as u64 (and the level or plane index, u32); replies the result, then for the
// children the u64 handle.
#include <cstdint>

#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

uint64_t handle_value(const void* handle) {
  return reinterpret_cast<uintptr_t>(handle);
}

cudaError_t free_handle(cr::Fn fn, const void* handle) {
  return cr::remote_sync(
      fn, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(handle_value(handle)); },
      [](gvirtus::WireReader&) {});
}

// A child array of `parent`, written to `*child` on success.
cudaError_t get_child(cr::Fn fn, cudaArray_t* child, const void* parent, unsigned index) {
  if (child == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  uint64_t got = 0;
  const cudaError_t result = cr::remote_sync(
      fn,
      [&](gvirtus::WireWriter& w) {
        w.put<uint64_t>(handle_value(parent));
        w.put<uint32_t>(index);
      },
      [&](gvirtus::WireReader& r) { got = r.get<uint64_t>(); });
  if (result == cudaSuccess) *child = reinterpret_cast<cudaArray_t>(static_cast<uintptr_t>(got));
  return result;
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaFreeArray(cudaArray_t array) {
  return free_handle(cr::Fn::cudaFreeArray, array);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray) {
  return free_handle(cr::Fn::cudaFreeMipmappedArray, mipmappedArray);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetMipmappedArrayLevel(
    cudaArray_t* levelArray, cudaMipmappedArray_const_t mipmappedArray, unsigned int level) {
  return get_child(cr::Fn::cudaGetMipmappedArrayLevel, levelArray, mipmappedArray, level);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaArrayGetPlane(cudaArray_t* pPlaneArray, cudaArray_t hArray,
                                                    unsigned int planeIdx) {
  return get_child(cr::Fn::cudaArrayGetPlane, pPlaneArray, hArray, planeIdx);
}

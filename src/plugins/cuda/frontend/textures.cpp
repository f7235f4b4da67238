// Texture and surface objects, mipmapped arrays' levels and array destruction in the client
// libcuda.so.1 (custom rows; wire: common/driver_wire.h): the descriptors travel as their bytes,
// and the backend vets what they name (backend/textures.cpp).
#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/wire_record.h"
#include "cuda_remote_calls.h"

namespace cr = gvirtus::cuda;

namespace {

// A call whose reply is i32 result, then u64 handle (0 after a failure), written to `*out` on
// success.
template <typename Handle, typename Encode>
CUresult create(cr::Fn fn, Handle* out, Encode encode) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t created = 0;
  const CUresult result =
      cr::remote_sync(fn, encode, [&](gvirtus::WireReader& r) { created = r.get<uint64_t>(); });
  if (result == CUDA_SUCCESS) {
    if constexpr (std::is_pointer_v<Handle>) {
      *out = reinterpret_cast<Handle>(static_cast<uintptr_t>(created));
    } else {
      *out = static_cast<Handle>(created);
    }
  }
  return result;
}

template <typename Handle>
uint64_t handle_value(Handle handle) {
  return reinterpret_cast<uintptr_t>(handle);
}

CUresult destroy(cr::Fn fn, uint64_t object) {
  return cr::remote_sync(
      fn, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(object); }, [](gvirtus::WireReader&) {});
}

// One of an object's descriptors, written to `*out` on success.
template <typename Desc>
CUresult describe(cr::Fn fn, Desc* out, uint64_t object) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Desc desc{};
  const CUresult result = cr::remote_sync(
      fn, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(object); },
      [&](gvirtus::WireReader& r) {
        const auto bytes = r.get_raw(sizeof desc);
        std::memcpy(&desc, bytes.data(), sizeof desc);
      });
  if (result == CUDA_SUCCESS) *out = desc;
  return result;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuTexObjectCreate(
    CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc, const CUDA_TEXTURE_DESC* pTexDesc,
    const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) {
  if (pResDesc == nullptr || pTexDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return create(cr::Fn::cuTexObjectCreate, pTexObject, [&](gvirtus::WireWriter& w) {
    w.put<uint32_t>(pResViewDesc != nullptr ? 1 : 0);
    w.put_raw(pResDesc, sizeof *pResDesc);
    w.put_raw(pTexDesc, sizeof *pTexDesc);
    if (pResViewDesc != nullptr) w.put_raw(pResViewDesc, sizeof *pResViewDesc);
  });
}

extern "C" __attribute__((visibility("default"))) CUresult cuSurfObjectCreate(
    CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc) {
  if (pResDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return create(cr::Fn::cuSurfObjectCreate, pSurfObject,
                [&](gvirtus::WireWriter& w) { w.put_raw(pResDesc, sizeof *pResDesc); });
}

extern "C" __attribute__((visibility("default"))) CUresult cuMipmappedArrayGetLevel(
    CUarray* pLevelArray, CUmipmappedArray hMipmappedArray, unsigned int level) {
  return create(cr::Fn::cuMipmappedArrayGetLevel, pLevelArray, [&](gvirtus::WireWriter& w) {
    w.put<uint64_t>(handle_value(hMipmappedArray));
    w.put<uint32_t>(level);
  });
}

extern "C" __attribute__((visibility("default"))) CUresult cuMipmappedArrayDestroy(
    CUmipmappedArray hMipmappedArray) {
  return cr::remote_sync(
      cr::Fn::cuMipmappedArrayDestroy,
      [&](gvirtus::WireWriter& w) { w.put<uint64_t>(handle_value(hMipmappedArray)); },
      [](gvirtus::WireReader&) {});
}

extern "C" __attribute__((visibility("default"))) CUresult cuArrayDestroy(CUarray hArray) {
  return cr::remote_sync(
      cr::Fn::cuArrayDestroy,
      [&](gvirtus::WireWriter& w) { w.put<uint64_t>(handle_value(hArray)); },
      [](gvirtus::WireReader&) {});
}

extern "C" __attribute__((visibility("default"))) CUresult cuTexObjectDestroy(
    CUtexObject texObject) {
  return destroy(cr::Fn::cuTexObjectDestroy, texObject);
}

extern "C" __attribute__((visibility("default"))) CUresult cuSurfObjectDestroy(
    CUsurfObject surfObject) {
  return destroy(cr::Fn::cuSurfObjectDestroy, surfObject);
}

extern "C" __attribute__((visibility("default"))) CUresult cuTexObjectGetResourceDesc(
    CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject) {
  return describe(cr::Fn::cuTexObjectGetResourceDesc, pResDesc, texObject);
}

extern "C" __attribute__((visibility("default"))) CUresult cuTexObjectGetTextureDesc(
    CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) {
  return describe(cr::Fn::cuTexObjectGetTextureDesc, pTexDesc, texObject);
}

extern "C" __attribute__((visibility("default"))) CUresult cuTexObjectGetResourceViewDesc(
    CUDA_RESOURCE_VIEW_DESC* pResViewDesc, CUtexObject texObject) {
  return describe(cr::Fn::cuTexObjectGetResourceViewDesc, pResViewDesc, texObject);
}

extern "C" __attribute__((visibility("default"))) CUresult cuSurfObjectGetResourceDesc(
    CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject) {
  return describe(cr::Fn::cuSurfObjectGetResourceDesc, pResDesc, surfObject);
}

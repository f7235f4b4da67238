// Texture and surface objects (custom rows 169-176 of cudart_calls.txt): the descriptors travel
// as their bytes, and the backend vets what they name (the wire: backend/textures.h).
#include <cstdint>
#include <cstring>

#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

// A create call: the result, then the u64 object, written to `*out` on success.
template <typename Object>
cudaError_t create(cr::Fn fn, Object* out, cr::Encoder encode) {
  uint64_t created = 0;
  const cudaError_t result =
      cr::remote_sync(fn, encode, [&](gvirtus::WireReader& r) { created = r.get<uint64_t>(); });
  if (result == cudaSuccess) *out = static_cast<Object>(created);
  return result;
}

cudaError_t destroy(cr::Fn fn, uint64_t object) {
  return cr::remote_sync(
      fn, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(object); }, [](gvirtus::WireReader&) {});
}

// One of an object's descriptors, written to `*out` on success.
template <typename Desc>
cudaError_t describe(cr::Fn fn, Desc* out, uint64_t object) {
  if (out == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  Desc desc{};
  const cudaError_t result = cr::remote_sync(
      fn, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(object); },
      [&](gvirtus::WireReader& r) {
        const auto bytes = r.get_raw(sizeof desc);
        std::memcpy(&desc, bytes.data(), sizeof desc);
      });
  if (result == cudaSuccess) *out = desc;
  return result;
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaCreateTextureObject(
    cudaTextureObject_t* pTexObject, const struct cudaResourceDesc* pResDesc,
    const struct cudaTextureDesc* pTexDesc, const struct cudaResourceViewDesc* pResViewDesc) {
  if (pTexObject == nullptr || pResDesc == nullptr || pTexDesc == nullptr) {
    return cr::refuse_locally(cudaErrorInvalidValue);
  }
  return create(cr::Fn::cudaCreateTextureObject, pTexObject, [&](gvirtus::WireWriter& w) {
    w.put<uint32_t>(pResViewDesc != nullptr ? 1 : 0);
    w.put_raw(pResDesc, sizeof *pResDesc);
    w.put_raw(pTexDesc, sizeof *pTexDesc);
    if (pResViewDesc != nullptr) w.put_raw(pResViewDesc, sizeof *pResViewDesc);
  });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* pSurfObject,
                                                          const struct cudaResourceDesc* pResDesc) {
  if (pSurfObject == nullptr || pResDesc == nullptr) {
    return cr::refuse_locally(cudaErrorInvalidValue);
  }
  return create(cr::Fn::cudaCreateSurfaceObject, pSurfObject,
                [&](gvirtus::WireWriter& w) { w.put_raw(pResDesc, sizeof *pResDesc); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject) {
  return destroy(cr::Fn::cudaDestroyTextureObject, texObject);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject) {
  return destroy(cr::Fn::cudaDestroySurfaceObject, surfObject);
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGetTextureObjectResourceDesc(struct cudaResourceDesc* pResDesc, cudaTextureObject_t texObject) {
  return describe(cr::Fn::cudaGetTextureObjectResourceDesc, pResDesc, texObject);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc* pTexDesc,
                                                                  cudaTextureObject_t texObject) {
  return describe(cr::Fn::cudaGetTextureObjectTextureDesc, pTexDesc, texObject);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetTextureObjectResourceViewDesc(
    struct cudaResourceViewDesc* pResViewDesc, cudaTextureObject_t texObject) {
  return describe(cr::Fn::cudaGetTextureObjectResourceViewDesc, pResViewDesc, texObject);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetSurfaceObjectResourceDesc(
    struct cudaResourceDesc* pResDesc, cudaSurfaceObject_t surfObject) {
  return describe(cr::Fn::cudaGetSurfaceObjectResourceDesc, pResDesc, surfObject);
}

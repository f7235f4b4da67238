// Texture and surface objects on the simulated device: their descriptors kept as given, after
// the resource they name is checked (arrays.cpp's check_resource). Kernels never read them here;
// a launch records an object as the integer it passes.
#include <type_traits>

#include "state.h"

namespace sim = gvirtus::simulated;

GVIRTUS_SIMULATED_EXPORT CUresult cuTexObjectCreate(CUtexObject* pTexObject,
                                                    const CUDA_RESOURCE_DESC* pResDesc,
                                                    const CUDA_TEXTURE_DESC* pTexDesc,
                                                    const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) {
  return sim::guarded([&](sim::State& s) {
    if (pTexObject == nullptr || pResDesc == nullptr || pTexDesc == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = sim::check_resource(s, *pResDesc, false); r != CUDA_SUCCESS) return r;
    for (const CUaddress_mode mode : pTexDesc->addressMode) {
      if (mode < CU_TR_ADDRESS_MODE_WRAP || mode > CU_TR_ADDRESS_MODE_BORDER) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    const CUtexObject object = s.next_texture++;
    s.textures[object] = {*pResDesc, *pTexDesc,
                          pResViewDesc != nullptr ? *pResViewDesc : CUDA_RESOURCE_VIEW_DESC{},
                          pResViewDesc != nullptr};
    *pTexObject = object;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuTexObjectDestroy(CUtexObject texObject) {
  return sim::guarded([&](sim::State& s) {
    return s.textures.erase(texObject) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

namespace {

// One of a texture object's descriptors, by member.
template <typename Desc>
CUresult texture_part(Desc* out, CUtexObject object, Desc sim::TextureObject::*part) {
  return sim::guarded([&](sim::State& s) {
    if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto found = s.textures.find(object);
    if (found == s.textures.end()) return CUDA_ERROR_INVALID_HANDLE;
    if constexpr (std::is_same_v<Desc, CUDA_RESOURCE_VIEW_DESC>) {
      if (!found->second.has_view) return CUDA_ERROR_INVALID_VALUE;  // made without a view
    }
    *out = found->second.*part;
    return CUDA_SUCCESS;
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc,
                                                             CUtexObject texObject) {
  return texture_part(pResDesc, texObject, &sim::TextureObject::resource);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* pTexDesc,
                                                            CUtexObject texObject) {
  return texture_part(pTexDesc, texObject, &sim::TextureObject::texture);
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* pResViewDesc, CUtexObject texObject) {
  return texture_part(pResViewDesc, texObject, &sim::TextureObject::view);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuSurfObjectCreate(CUsurfObject* pSurfObject,
                                                     const CUDA_RESOURCE_DESC* pResDesc) {
  return sim::guarded([&](sim::State& s) {
    if (pSurfObject == nullptr || pResDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = sim::check_resource(s, *pResDesc, true); r != CUDA_SUCCESS) return r;
    const CUsurfObject object = s.next_surface++;
    s.surfaces[object] = *pResDesc;
    *pSurfObject = object;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuSurfObjectDestroy(CUsurfObject surfObject) {
  return sim::guarded([&](sim::State& s) {
    return s.surfaces.erase(surfObject) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc,
                                                              CUsurfObject surfObject) {
  return sim::guarded([&](sim::State& s) {
    if (pResDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto found = s.surfaces.find(surfObject);
    if (found == s.surfaces.end()) return CUDA_ERROR_INVALID_HANDLE;
    *pResDesc = found->second;
    return CUDA_SUCCESS;
  });
}

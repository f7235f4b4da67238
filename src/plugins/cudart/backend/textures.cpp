// Texture and surface objects (textures.h).
//
// A resource descriptor names what the object reads or writes: an array or a mipmapped array,
// which must be the session's, or device memory (linear, or pitched in 2D), whose whole extent
// must lie in the session's memory; the runtime judges the rest (formats, filtering, flags) as it
// would for a program of its own. The objects are integers of two spaces, kept per session
// (services/object_set.h) with the device current when they were made.
#include "plugins/cudart/backend/textures.h"

#include <cstring>

#include "backend/services/object_set.h"
#include "common/call_marshal.h"
#include "common/error.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/array_wire.h"

namespace gvirtus::cudart {
namespace {

services::ObjectSet textures("cudart", "texture object");
services::ObjectSet surfaces("cudart", "surface object");

cudaError_t vet_object(const services::ObjectSet& objects, uint64_t object) {
  return static_cast<cudaError_t>(objects.vet(object, cudaSuccess, cudaErrorInvalidResourceHandle));
}

template <typename T>
T get_plain(WireReader& in) {
  T value{};
  const auto bytes = in.get_raw(sizeof value);
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

cudaError_t vet_resource(const cudaResourceDesc& d, bool surface) {
  // The type as the client's bits: a value outside the enum must not be loaded as one.
  switch (marshal::enum_bits(d.resType)) {
    case cudaResourceTypeArray:
      return vet(d.res.array.array);
    case cudaResourceTypeMipmappedArray:
      return surface ? cudaErrorInvalidValue : vet(d.res.mipmap.mipmap);
    case cudaResourceTypeLinear:
      if (surface) return cudaErrorInvalidValue;
      return vet_device_pointer(d.res.linear.devPtr, d.res.linear.sizeInBytes);
    case cudaResourceTypePitch2D: {
      if (surface) return cudaErrorInvalidValue;
      const auto& p = d.res.pitch2D;
      const uint64_t element = channel_element_bytes(p.desc);
      if (element == 0 || p.height == 0 || p.width == 0) return cudaErrorInvalidValue;
      const unsigned __int128 row = static_cast<unsigned __int128>(p.width) * element;
      const unsigned __int128 span =
          static_cast<unsigned __int128>(p.pitchInBytes) * (p.height - 1) + row;
      if (span > UINT64_MAX || p.pitchInBytes < row) return cudaErrorInvalidValue;
      return vet_device_pointer(p.devPtr, static_cast<uint64_t>(span));
    }
  }
  return cudaErrorInvalidValue;
}

cudaError_t texture_create(WireReader& in, WireWriter& out, size_t at) {
  const auto has_view = in.get<uint32_t>();
  if (has_view > 1) raise(ErrorKind::kInvalidInput, "cudaCreateTextureObject's view flag");
  const auto resource = get_plain<cudaResourceDesc>(in);
  const auto texture = get_plain<cudaTextureDesc>(in);
  cudaResourceViewDesc view{};
  if (has_view != 0) view = get_plain<cudaResourceViewDesc>(in);
  in.expect_end();
  cudaTextureObject_t object = 0;
  cudaError_t result = vet_resource(resource, false);
  if (result == cudaSuccess) {
    result =
        ::cudaCreateTextureObject(&object, &resource, &texture, has_view != 0 ? &view : nullptr);
  }
  if (result == cudaSuccess) textures.adopt(object, current_device());
  out.store_at<int32_t>(at, result);
  out.put<uint64_t>(result == cudaSuccess ? object : 0);
  return result;
}

cudaError_t surface_create(WireReader& in, WireWriter& out, size_t at) {
  const auto resource = get_plain<cudaResourceDesc>(in);
  in.expect_end();
  cudaSurfaceObject_t object = 0;
  cudaError_t result = vet_resource(resource, true);
  if (result == cudaSuccess) result = ::cudaCreateSurfaceObject(&object, &resource);
  if (result == cudaSuccess) surfaces.adopt(object, current_device());
  out.store_at<int32_t>(at, result);
  out.put<uint64_t>(result == cudaSuccess ? object : 0);
  return result;
}

// An object destroyed: vetted, then forgotten once the runtime destroyed it.
template <typename Object>
cudaError_t object_destroy(services::ObjectSet& objects, cudaError_t (*destroy)(Object),
                           WireReader& in) {
  const auto object = in.get<uint64_t>();
  in.expect_end();
  cudaError_t result = vet_object(objects, object);
  if (result == cudaSuccess) result = destroy(object);
  if (result == cudaSuccess) objects.forget(object);
  return result;
}

// One of an object's descriptors: the result, then its bytes (zeroed after a failure).
template <typename Desc, typename Object>
cudaError_t object_describe(const services::ObjectSet& objects,
                            cudaError_t (*describe)(Desc*, Object), WireReader& in,
                            WireWriter& out) {
  const auto object = in.get<uint64_t>();
  in.expect_end();
  Desc desc{};
  cudaError_t result = vet_object(objects, object);
  if (result == cudaSuccess) result = describe(&desc, object);
  if (result != cudaSuccess) desc = Desc{};
  out.put_raw(&desc, sizeof desc);
  return result;
}

}  // namespace

bool run_texture(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  const size_t at = out.size();
  switch (fn) {
    case Fn::cudaCreateTextureObject:
    case Fn::cudaCreateSurfaceObject:
    case Fn::cudaDestroyTextureObject:
    case Fn::cudaDestroySurfaceObject:
    case Fn::cudaGetTextureObjectResourceDesc:
    case Fn::cudaGetTextureObjectTextureDesc:
    case Fn::cudaGetTextureObjectResourceViewDesc:
    case Fn::cudaGetSurfaceObjectResourceDesc:
      break;
    default:
      return false;
  }
  out.put<int32_t>(cudaSuccess);  // the result, stored once the call has run
  switch (fn) {
    case Fn::cudaCreateTextureObject:
      result = texture_create(in, out, at);
      break;
    case Fn::cudaCreateSurfaceObject:
      result = surface_create(in, out, at);
      break;
    case Fn::cudaDestroyTextureObject:
      result = object_destroy(textures, ::cudaDestroyTextureObject, in);
      break;
    case Fn::cudaDestroySurfaceObject:
      result = object_destroy(surfaces, ::cudaDestroySurfaceObject, in);
      break;
    case Fn::cudaGetTextureObjectResourceDesc:
      result = object_describe(textures, ::cudaGetTextureObjectResourceDesc, in, out);
      break;
    case Fn::cudaGetTextureObjectTextureDesc:
      result = object_describe(textures, ::cudaGetTextureObjectTextureDesc, in, out);
      break;
    case Fn::cudaGetTextureObjectResourceViewDesc:
      result = object_describe(textures, ::cudaGetTextureObjectResourceViewDesc, in, out);
      break;
    default:  // cudaGetSurfaceObjectResourceDesc
      result = object_describe(surfaces, ::cudaGetSurfaceObjectResourceDesc, in, out);
      break;
  }
  out.store_at<int32_t>(at, result);
  return true;
}

void forget_textures(int device) {
  textures.forget_owner(device);
  surfaces.forget_owner(device);
}

}  // namespace gvirtus::cudart

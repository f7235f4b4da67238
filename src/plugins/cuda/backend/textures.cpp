// Texture and surface objects, and mipmapped arrays' levels (wire: common/driver_wire.h).
//
// A resource descriptor names what the object reads or writes: an array or a mipmapped array,
// which must be the session's, or device memory (linear, or pitched in 2D), whose whole extent
// must lie in the session's allocations; the driver takes the rest (formats, filtering) as it
// would from a program of its own. The descriptors are plain data otherwise.
//
// The objects are integers, of two spaces (a texture object and a surface object may be equal),
// so they are kept here, apart from the session's handle table, each with the device whose
// context made it: only those the session made and has not destroyed reach the driver.
//
// A mipmapped array's level is an array the mipmapped array owns: the session may use it as any
// array (it is adopted as one), but not destroy it, and it goes when its mipmapped array goes.
// The levels handed out are recorded here, per mipmapped array (one session per worker).
#include "plugins/cuda/backend/textures.h"

#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "backend/services/object_set.h"
#include "backend/services/rejections.h"
#include "common/call_marshal.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/common/array_formats.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

std::mutex levels_mutex;
std::map<CUarray, CUmipmappedArray> levels;  // level -> its mipmapped array

// The session's texture or surface objects, each with its device (handle_owner's).
class Objects {
 public:
  explicit Objects(const char* what) : set_("cuda", what) {}
  void adopt(uint64_t object) { set_.adopt(object, context_device()); }
  CUresult vet(uint64_t object) const {
    return static_cast<CUresult>(set_.vet(object, CUDA_SUCCESS, CUDA_ERROR_INVALID_HANDLE));
  }
  void forget(uint64_t object) { set_.forget(object); }
  void forget_device(int device) { set_.forget_owner(device); }

 private:
  services::ObjectSet set_;
};

Objects textures("texture object");
Objects surfaces("surface object");

uint16_t kind(HandleKind k) {
  return static_cast<uint16_t>(k);
}

bool is_level(CUarray array) {
  const std::lock_guard lock(levels_mutex);
  return levels.contains(array);
}

template <typename Handle>
Handle as_handle(uint64_t value) {
  return reinterpret_cast<Handle>(static_cast<uintptr_t>(value));
}

template <typename T>
T get_plain(WireReader& in) {
  T value{};
  const auto bytes = in.get_raw(sizeof value);
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

// The bytes a texel of `channels` elements of `format` takes, or 0 for a format beyond the
// ones a pitched resource may have.
uint64_t texel_bytes(int format, unsigned channels) {
  return channels >= 1 && channels <= 4 ? channel_bytes(format) * channels : 0;
}

CUresult vet_resource(const CUDA_RESOURCE_DESC& d, bool surface) {
  // The type as the client's bits: a value outside the enum must not be loaded as one.
  switch (marshal::enum_bits(d.resType)) {
    case CU_RESOURCE_TYPE_ARRAY:
      return vet(d.res.array.hArray);
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
      return surface ? CUDA_ERROR_INVALID_VALUE : vet(d.res.mipmap.hMipmappedArray);
    case CU_RESOURCE_TYPE_LINEAR:
      if (surface) return CUDA_ERROR_INVALID_VALUE;
      return vet_device_pointer(d.res.linear.devPtr, d.res.linear.sizeInBytes);
    case CU_RESOURCE_TYPE_PITCH2D: {
      if (surface) return CUDA_ERROR_INVALID_VALUE;
      const auto& p = d.res.pitch2D;
      // The client's bits, not loaded as the enum (it may hold any value).
      const uint64_t texel = texel_bytes(marshal::enum_bits(p.format), p.numChannels);
      if (texel == 0 || p.height == 0 || p.width == 0) return CUDA_ERROR_INVALID_VALUE;
      const unsigned __int128 span =
          static_cast<unsigned __int128>(p.pitchInBytes) * (p.height - 1) +
          static_cast<unsigned __int128>(p.width) * texel;
      if (span > UINT64_MAX || p.pitchInBytes < p.width * texel) return CUDA_ERROR_INVALID_VALUE;
      return vet_device_pointer(p.devPtr, static_cast<uint64_t>(span));
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

void texture_create(WireReader& in, WireWriter& out, CUresult& result) {
  const auto has_view = in.get<uint32_t>();
  if (has_view > 1) raise(ErrorKind::kInvalidInput, "cuTexObjectCreate's view flag");
  const auto resource = get_plain<CUDA_RESOURCE_DESC>(in);
  const auto texture = get_plain<CUDA_TEXTURE_DESC>(in);
  CUDA_RESOURCE_VIEW_DESC view{};
  if (has_view != 0) view = get_plain<CUDA_RESOURCE_VIEW_DESC>(in);
  in.expect_end();
  result = vet_resource(resource, false);
  if (result == CUDA_SUCCESS && real().cuTexObjectCreate == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  CUtexObject object = 0;
  if (result == CUDA_SUCCESS) {
    result =
        real().cuTexObjectCreate(&object, &resource, &texture, has_view != 0 ? &view : nullptr);
  }
  if (result == CUDA_SUCCESS) textures.adopt(object);
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? object : 0);
}

void surface_create(WireReader& in, WireWriter& out, CUresult& result) {
  const auto resource = get_plain<CUDA_RESOURCE_DESC>(in);
  in.expect_end();
  result = vet_resource(resource, true);
  if (result == CUDA_SUCCESS && real().cuSurfObjectCreate == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  CUsurfObject object = 0;
  if (result == CUDA_SUCCESS) result = real().cuSurfObjectCreate(&object, &resource);
  if (result == CUDA_SUCCESS) surfaces.adopt(object);
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? object : 0);
}

// An object destroyed: vetted, then forgotten when the driver destroyed it.
template <typename Destroy>
void object_destroy(Objects& objects, Destroy* destroy, WireReader& in, WireWriter& out,
                    CUresult& result) {
  const auto object = in.get<uint64_t>();
  in.expect_end();
  result = objects.vet(object);
  if (result == CUDA_SUCCESS && destroy == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) result = destroy(object);
  if (result == CUDA_SUCCESS) objects.forget(object);
  out.put<int32_t>(result);
}

// One of an object's descriptors: i32 result, then its bytes (zeroed after a failure).
template <typename Desc>
void object_describe(Objects& objects, CUresult (*describe)(Desc*, CUtexObject), WireReader& in,
                     WireWriter& out, CUresult& result) {
  const auto object = in.get<uint64_t>();
  in.expect_end();
  Desc desc{};
  result = objects.vet(object);
  if (result == CUDA_SUCCESS && describe == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) result = describe(&desc, object);
  if (result != CUDA_SUCCESS) desc = Desc{};
  out.put<int32_t>(result);
  out.put_raw(&desc, sizeof desc);
}

void level_get(WireReader& in, WireWriter& out, CUresult& result) {
  const auto mipmapped = as_handle<CUmipmappedArray>(in.get<uint64_t>());
  const auto level = in.get<uint32_t>();
  in.expect_end();
  result = mipmapped != nullptr ? vet(mipmapped) : CUDA_ERROR_INVALID_HANDLE;
  if (result == CUDA_SUCCESS && real().cuMipmappedArrayGetLevel == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  CUarray array = nullptr;
  if (result == CUDA_SUCCESS) result = real().cuMipmappedArrayGetLevel(&array, mipmapped, level);
  if (result == CUDA_SUCCESS && array != nullptr) {
    adopt(array);
    const std::lock_guard lock(levels_mutex);
    levels[array] = mipmapped;
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? reinterpret_cast<uintptr_t>(array) : 0);
}

void mipmapped_destroy(WireReader& in, WireWriter& out, CUresult& result) {
  const auto mipmapped = as_handle<CUmipmappedArray>(in.get<uint64_t>());
  in.expect_end();
  auto held = release(mipmapped);
  result = mipmapped != nullptr ? held.vetted() : CUDA_ERROR_INVALID_HANDLE;
  if (result == CUDA_SUCCESS && real().cuMipmappedArrayDestroy == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  if (result == CUDA_SUCCESS) result = real().cuMipmappedArrayDestroy(mipmapped);
  if (result == CUDA_SUCCESS) {
    held.destroyed();
    const std::lock_guard lock(levels_mutex);
    for (auto it = levels.begin(); it != levels.end();) {
      if (it->second != mipmapped) {
        ++it;
        continue;
      }
      services::session_services().handles.release(kind(HandleKind::kArray), it->first);
      it = levels.erase(it);
    }
  }
  out.put<int32_t>(result);
}

void array_destroy(WireReader& in, WireWriter& out, CUresult& result) {
  const auto array = as_handle<CUarray>(in.get<uint64_t>());
  in.expect_end();
  if (is_level(array)) {
    result = static_cast<CUresult>(
        services::refuse(CUDA_ERROR_INVALID_HANDLE, "cuda", "array", array,
                         "a mipmapped array's level, which goes with its mipmapped array"));
    out.put<int32_t>(result);
    return;
  }
  auto held = release(array);
  result = array != nullptr ? held.vetted() : CUDA_ERROR_INVALID_HANDLE;
  if (result == CUDA_SUCCESS) result = real().cuArrayDestroy(array);
  if (result == CUDA_SUCCESS) held.destroyed();
  out.put<int32_t>(result);
}

}  // namespace

bool run_texture(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuTexObjectCreate:
      texture_create(in, out, result);
      return true;
    case Fn::cuSurfObjectCreate:
      surface_create(in, out, result);
      return true;
    case Fn::cuTexObjectDestroy:
      object_destroy(textures, real().cuTexObjectDestroy, in, out, result);
      return true;
    case Fn::cuSurfObjectDestroy:
      object_destroy(surfaces, real().cuSurfObjectDestroy, in, out, result);
      return true;
    case Fn::cuTexObjectGetResourceDesc:
      object_describe(textures, real().cuTexObjectGetResourceDesc, in, out, result);
      return true;
    case Fn::cuTexObjectGetTextureDesc:
      object_describe(textures, real().cuTexObjectGetTextureDesc, in, out, result);
      return true;
    case Fn::cuTexObjectGetResourceViewDesc:
      object_describe(textures, real().cuTexObjectGetResourceViewDesc, in, out, result);
      return true;
    case Fn::cuSurfObjectGetResourceDesc:
      object_describe(surfaces, real().cuSurfObjectGetResourceDesc, in, out, result);
      return true;
    case Fn::cuMipmappedArrayGetLevel:
      level_get(in, out, result);
      return true;
    case Fn::cuMipmappedArrayDestroy:
      mipmapped_destroy(in, out, result);
      return true;
    case Fn::cuArrayDestroy:
      array_destroy(in, out, result);
      return true;
    default:
      return false;
  }
}

void forget_textures(int device) {
  textures.forget_device(device);
  surfaces.forget_device(device);
  const std::lock_guard lock(levels_mutex);
  for (auto it = levels.begin(); it != levels.end();) {
    if (services::session_services().handles.holds(kind(HandleKind::kMipmappedArray), it->second)) {
      ++it;
    } else {
      it = levels.erase(it);
    }
  }
}

}  // namespace gvirtus::cuda

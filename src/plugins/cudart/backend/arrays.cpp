// Arrays' custom calls (arrays.h).
//
// A mipmapped array's level (cudaGetMipmappedArrayLevel) and a multi-planar array's plane
// (cudaArrayGetPlane) are arrays their parent owns: the session may use them as any array (they
// are adopted as arrays) but not free them, and they go with their parent. The children handed
// out are recorded here with their parent (one session per worker process).
//
// Copies: the array must be the session's, and a device side must lie in the session's memory
// over the whole extent the copy reaches; the runtime checks the rest (offsets against the
// array's extent, the kind) as it would for a program of its own.
#include "plugins/cudart/backend/arrays.h"

#include <map>
#include <mutex>
#include <string>

#include "backend/services/rejections.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/array_wire.h"
#include "plugins/cudart/common/marshal.h"
#include "plugins/cudart/common/memcpy_wire.h"

namespace gvirtus::cudart {
namespace {

std::mutex children_mutex;
std::map<const void*, const void*> children;  // level or plane -> its parent

template <typename Handle>
Handle as_handle(uint64_t value) {
  return reinterpret_cast<Handle>(static_cast<uintptr_t>(value));
}

bool is_child(const void* array) {
  const std::lock_guard lock(children_mutex);
  return children.contains(array);
}

// Forgets the children of `parent`, which is gone: they leave the handle table too.
void forget_children_of(const void* parent) {
  const std::lock_guard lock(children_mutex);
  for (auto it = children.begin(); it != children.end();) {
    if (it->second != parent) {
      ++it;
      continue;
    }
    services::session_services().handles.release(static_cast<uint16_t>(HandleKind::kArray),
                                                 it->first);
    it = children.erase(it);
  }
}

// A level or plane handed out: the session uses it as an array of its own.
void adopt_child(cudaArray_t child, const void* parent) {
  adopt(child);
  const std::lock_guard lock(children_mutex);
  children[child] = parent;
}

cudaError_t free_array(WireReader& in) {
  const auto array = as_handle<cudaArray_t>(in.get<uint64_t>());
  in.expect_end();
  if (is_child(array)) {
    return static_cast<cudaError_t>(services::refuse(
        cudaErrorInvalidResourceHandle, "cudart", "array", array,
        "a mipmapped array's level or an array's plane, which goes with its parent"));
  }
  auto held = release(array);
  cudaError_t result = held.vetted();
  if (result == cudaSuccess) result = ::cudaFreeArray(array);
  if (result == cudaSuccess) {
    held.destroyed();
    forget_children_of(array);
  }
  return result;
}

cudaError_t free_mipmapped(WireReader& in) {
  const auto mipmapped = as_handle<cudaMipmappedArray_t>(in.get<uint64_t>());
  in.expect_end();
  auto held = release(mipmapped);
  cudaError_t result = held.vetted();
  if (result == cudaSuccess) result = ::cudaFreeMipmappedArray(mipmapped);
  if (result == cudaSuccess) {
    held.destroyed();
    forget_children_of(mipmapped);
  }
  return result;
}

// A child array of `parent`: i32 result, then u64 handle (0 after a failure).
template <typename Parent, typename Get>
cudaError_t get_child(WireReader& in, WireWriter& out, size_t at, Get get) {
  const auto parent = as_handle<Parent>(in.get<uint64_t>());
  const auto index = in.get<uint32_t>();
  in.expect_end();
  cudaArray_t child = nullptr;
  cudaError_t result = vet(parent);  // null passes: the runtime judges it
  if (result == cudaSuccess) result = get(&child, parent, index);
  if (result == cudaSuccess && child != nullptr) adopt_child(child, parent);
  out.store_at<int32_t>(at, result);
  out.put<uint64_t>(result == cudaSuccess ? reinterpret_cast<uintptr_t>(child) : 0);
  return result;
}

// The extent of linear memory a copy of `height` rows of `width` bytes, `pitch` apart, reaches.
uint64_t extent(uint64_t pitch, uint64_t width, uint64_t height) {
  if (height == 0 || width == 0) return 0;
  if (pitch != 0 && height - 1 > (UINT64_MAX - width) / pitch) return UINT64_MAX;
  return pitch * (height - 1) + width;
}

// The deprecated 1D forms are CUDA's still, and the application called them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
cudaError_t copy_on_runtime(const ArrayCopyRequest& r, bool to_array, void* linear, size_t pitch,
                            cudaStream_t stream, bool with_stream) {
  if (to_array && r.linear_bytes != 0) {
    return with_stream
               ? ::cudaMemcpyToArrayAsync(r.array, r.w_offset, r.h_offset, linear, r.width, r.kind,
                                          stream)
               : ::cudaMemcpyToArray(r.array, r.w_offset, r.h_offset, linear, r.width, r.kind);
  }
  if (to_array) {
    return with_stream ? ::cudaMemcpy2DToArrayAsync(r.array, r.w_offset, r.h_offset, linear, pitch,
                                                    r.width, r.height, r.kind, stream)
                       : ::cudaMemcpy2DToArray(r.array, r.w_offset, r.h_offset, linear, pitch,
                                               r.width, r.height, r.kind);
  }
  if (r.linear_bytes != 0) {
    return with_stream
               ? ::cudaMemcpyFromArrayAsync(linear, r.array, r.w_offset, r.h_offset, r.width,
                                            r.kind, stream)
               : ::cudaMemcpyFromArray(linear, r.array, r.w_offset, r.h_offset, r.width, r.kind);
  }
  return with_stream ? ::cudaMemcpy2DFromArrayAsync(linear, pitch, r.array, r.w_offset, r.h_offset,
                                                    r.width, r.height, r.kind, stream)
                     : ::cudaMemcpy2DFromArray(linear, pitch, r.array, r.w_offset, r.h_offset,
                                               r.width, r.height, r.kind);
}
#pragma GCC diagnostic pop

cudaError_t copy(WireReader& in, WireWriter& out, size_t at, bool to_array, bool with_stream) {
  const auto r = get_record<ArrayCopyRequest>(in);
  const char* call = to_array ? "cudaMemcpy2DToArray" : "cudaMemcpy2DFromArray";
  const cudaStream_t stream = request_stream(r.stream, with_stream, call);
  const bool host_source = to_array && r.kind == cudaMemcpyHostToDevice;
  const bool host_destination = !to_array && r.kind == cudaMemcpyDeviceToHost;
  const bool device_side = r.kind == cudaMemcpyDeviceToDevice;
  if (r.linear_bytes > 1 || (r.linear_bytes == 1 && r.height != 1)) {
    raise(ErrorKind::kInvalidInput, std::string(call) + "'s 1D form with several rows");
  }
  if ((host_source || host_destination) && r.height != 0 &&
      r.width > kMemcpyChunkBytes / r.height) {
    raise(ErrorKind::kInvalidInput, std::string(call) + " chunk of " + std::to_string(r.width) +
                                        " x " + std::to_string(r.height) + " bytes");
  }
  if (!device_side && r.linear != nullptr) {  // a host side travels as bytes, never by address
    raise(ErrorKind::kInvalidInput, std::string(call) + " naming a host address");
  }
  const cudaError_t stream_ok = vet_copy_stream(stream, with_stream, !device_side);
  cudaError_t vetted = first_failure(stream_ok, vet(r.array));
  if (device_side) {
    vetted =
        first_failure(vetted, vet_device_pointer(r.linear, extent(r.pitch, r.width, r.height)));
  }
  void* linear = r.linear;
  size_t pitch = r.pitch;
  if (host_source) {
    const auto rows = in.get_raw(r.width * r.height);
    linear = const_cast<std::byte*>(rows.data());
    pitch = r.width;
  }
  in.expect_end();
  if (host_destination) {
    out.put<uint64_t>(r.width * r.height);
    linear = out.put_space(r.width * r.height);  // the reply is the staging buffer
    pitch = r.width;
  }
  const cudaError_t result = vetted != cudaSuccess
                                 ? vetted
                                 : copy_on_runtime(r, to_array, linear, pitch, stream, with_stream);
  out.store_at<int32_t>(at, result);
  // A failed copy returns no data, so the caller's buffer stays untouched, as natively.
  if (result != cudaSuccess) out.truncate(at + sizeof(int32_t));
  return result;
}

}  // namespace

bool run_array(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  // Every reply starts with the result, stored once the call has run.
  const size_t at = out.size();
  auto start_reply = [&] { out.put<int32_t>(cudaSuccess); };
  switch (fn) {
    case Fn::cudaFreeArray:
      start_reply();
      result = free_array(in);
      out.store_at<int32_t>(at, result);
      return true;
    case Fn::cudaFreeMipmappedArray:
      start_reply();
      result = free_mipmapped(in);
      out.store_at<int32_t>(at, result);
      return true;
    case Fn::cudaGetMipmappedArrayLevel:
      start_reply();
      result = get_child<cudaMipmappedArray_t>(
          in, out, at, [](cudaArray_t* child, cudaMipmappedArray_t parent, unsigned level) {
            return ::cudaGetMipmappedArrayLevel(child, parent, level);
          });
      return true;
    case Fn::cudaArrayGetPlane:
      start_reply();
      result = get_child<cudaArray_t>(in, out, at,
                                      [](cudaArray_t* child, cudaArray_t parent, unsigned plane) {
                                        return ::cudaArrayGetPlane(child, parent, plane);
                                      });
      return true;
    case Fn::cudaMemcpy2DToArray:
    case Fn::cudaMemcpy2DToArrayAsync:
    case Fn::cudaMemcpy2DFromArray:
    case Fn::cudaMemcpy2DFromArrayAsync: {
      const bool to_array = fn == Fn::cudaMemcpy2DToArray || fn == Fn::cudaMemcpy2DToArrayAsync;
      const bool with_stream =
          fn == Fn::cudaMemcpy2DToArrayAsync || fn == Fn::cudaMemcpy2DFromArrayAsync;
      start_reply();
      result = copy(in, out, at, to_array, with_stream);
      return true;
    }
    default:
      return false;
  }
}

void forget_array_children() {
  const auto& handles = services::session_services().handles;
  const std::lock_guard lock(children_mutex);
  std::erase_if(children, [&](const auto& entry) {
    return !handles.holds(static_cast<uint16_t>(HandleKind::kArray), entry.second) &&
           !handles.holds(static_cast<uint16_t>(HandleKind::kMipmappedArray), entry.second);
  });
}

}  // namespace gvirtus::cudart

// Hand-written backend handlers for the custom rows of cudart_calls.txt.
#include "common/wire_record.h"
#include "plugins/cudart/backend/arrays.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/host_functions.h"
#include "plugins/cudart/backend/ipc.h"
#include "plugins/cudart/backend/memcpy_3d.h"
#include "plugins/cudart/backend/memory_pools.h"
#include "plugins/cudart/backend/shared_host_memory.h"
#include "plugins/cudart/backend/textures.h"
#include "plugins/cudart/backend/user_objects.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/memcpy_wire.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace gvirtus::cudart {
namespace {

// cudaMemcpy, or cudaMemcpyAsync when `with_stream`. Copies between the network buffers and the
// device go through pageable memory, for which the runtime finishes reading (host to device) or
// writing (device to host) the host side before it returns, so the buffers can be reused at once.
cudaError_t run_memcpy(WireReader& in, WireWriter& out, bool with_stream) {
  const auto request = get_record<MemcpyRequest>(in);
  void* dst = request.dst;
  const void* src = request.src;
  const uint64_t count = request.count;
  const cudaMemcpyKind kind = request.kind;
  const cudaStream_t stream = request_stream(request.stream, with_stream, "cudaMemcpy");
  // The client's pointers reach the runtime only as the device side of a copy, once vetted; the
  // host side is always a buffer of ours.
  auto memcpy_on_backend = [&](void* to, const void* from, cudaError_t vetted) {
    if (vetted != cudaSuccess) return vetted;
    return with_stream ? ::cudaMemcpyAsync(to, from, count, kind, stream)
                       : ::cudaMemcpy(to, from, count, kind);
  };
  const bool our_buffer = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost ||
                          kind == cudaMemcpyHostToHost;
  const cudaError_t stream_ok = vet_copy_stream(stream, with_stream, our_buffer);
  if (count > kMemcpyChunkBytes) {
    raise(ErrorKind::kInvalidInput, "cudaMemcpy chunk of " + std::to_string(count) + " bytes");
  }
  cudaError_t result;
  const size_t at = out.size();
  out.put<int32_t>(cudaSuccess);
  switch (kind) {
    case cudaMemcpyHostToDevice: {
      const auto data = in.get_raw(count);
      in.expect_end();
      result = memcpy_on_backend(dst, data.data(),
                                 first_failure(stream_ok, vet_device_pointer(dst, count)));
      break;
    }
    case cudaMemcpyDeviceToHost: {
      in.expect_end();
      out.put<uint64_t>(count);
      std::byte* landing = out.put_space(count);  // the reply buffer is the staging buffer
      result =
          memcpy_on_backend(landing, src, first_failure(stream_ok, vet_device_pointer(src, count)));
      break;
    }
    case cudaMemcpyHostToHost: {
      const auto data = in.get_raw(count);
      in.expect_end();
      out.put<uint64_t>(count);
      std::byte* landing = out.put_space(count);
      result = memcpy_on_backend(landing, data.data(), stream_ok);
      break;
    }
    default:  // device to device (cudaMemcpyDefault included), or a kind for the runtime to judge
      in.expect_end();
      result = memcpy_on_backend(
          dst, src,
          first_failure(stream_ok, vet_device_pointer(dst, count), vet_device_pointer(src, count)));
      break;
  }
  out.store_at<int32_t>(at, result);
  // A failed copy returns no data, so the caller's buffer stays untouched, as natively.
  if (result != cudaSuccess) out.truncate(at + sizeof(int32_t));
  return result;
}

// cudaMemcpy2D(Async): the host side's rows arrive (host to device) or leave (device to host)
// packed, so its pitch is the width; the device side's pitch is the client's, for the runtime to
// validate.
cudaError_t run_memcpy_2d(WireReader& in, WireWriter& out, bool with_stream) {
  const auto request = get_record<Memcpy2DRequest>(in);
  void* dst = request.dst;
  const uint64_t dpitch = request.dpitch;
  const void* src = request.src;
  const uint64_t spitch = request.spitch;
  const uint64_t width = request.width;
  const uint64_t height = request.height;
  const cudaMemcpyKind kind = request.kind;
  const cudaStream_t stream = request_stream(request.stream, with_stream, "cudaMemcpy2D");
  const bool to_host = kind == cudaMemcpyDeviceToHost;
  const bool from_host = kind == cudaMemcpyHostToDevice;
  if ((to_host || from_host) && height != 0 && width > kMemcpyChunkBytes / height) {
    raise(ErrorKind::kInvalidInput, "cudaMemcpy2D chunk of " + std::to_string(width) + " x " +
                                        std::to_string(height) + " bytes");
  }
  // The device side's extent: rows of `pitch`, the last one `width` long.
  auto extent = [&](uint64_t pitch) {
    if (height == 0 || width == 0) return uint64_t{0};
    if (pitch != 0 && height - 1 > (UINT64_MAX - width) / pitch) return UINT64_MAX;
    return pitch * (height - 1) + width;
  };
  const cudaError_t stream_ok = vet_copy_stream(stream, with_stream, to_host || from_host);
  auto copy = [&](void* to, size_t to_pitch, const void* from, size_t from_pitch,
                  cudaError_t vetted) {
    if (vetted != cudaSuccess) return vetted;
    return with_stream
               ? ::cudaMemcpy2DAsync(to, to_pitch, from, from_pitch, width, height, kind, stream)
               : ::cudaMemcpy2D(to, to_pitch, from, from_pitch, width, height, kind);
  };
  cudaError_t result;
  const size_t at = out.size();
  out.put<int32_t>(cudaSuccess);
  if (from_host) {
    const auto rows = in.get_raw(width * height);
    in.expect_end();
    result = copy(dst, dpitch, rows.data(), width,
                  first_failure(stream_ok, vet_device_pointer(dst, extent(dpitch))));
  } else if (to_host) {
    in.expect_end();
    out.put<uint64_t>(width * height);
    std::byte* landing = out.put_space(width * height);
    result = copy(landing, width, src, spitch,
                  first_failure(stream_ok, vet_device_pointer(src, extent(spitch))));
  } else {  // device to device, or a kind for the runtime to reject
    in.expect_end();
    result = copy(dst, dpitch, src, spitch,
                  first_failure(stream_ok, vet_device_pointer(dst, extent(dpitch)),
                                vet_device_pointer(src, extent(spitch))));
  }
  out.store_at<int32_t>(at, result);
  if (result != cudaSuccess) out.truncate(at + sizeof(int32_t));
  return result;
}

}  // namespace

bool run_custom(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaMemcpy:
      result = run_memcpy(in, out, false);
      return true;
    case Fn::cudaMemcpy2D:
      result = run_memcpy_2d(in, out, false);
      return true;
    case Fn::cudaMemcpy2DAsync:
      result = run_memcpy_2d(in, out, true);
      return true;
    case Fn::cudaModuleLoad:
      result = run_module_load(in, out);
      return true;
    case Fn::cudaModuleUnload:
      result = run_module_unload(in, out);
      return true;
    case Fn::cudaKernelResolve:
      result = run_kernel_resolve(in, out);
      return true;
    case Fn::cudaVarResolve:
      result = run_var_resolve(in, out);
      return true;
    case Fn::cudaGetFuncBySymbol:
      result = run_function_of_kernel(in, out);
      return true;
    case Fn::cudaMemPrefetchBatchAsync:
    case Fn::cudaMemDiscardBatchAsync:
    case Fn::cudaMemDiscardAndPrefetchBatchAsync:
      result = run_managed_batch(fn, in, out);
      return true;
    case Fn::cudaLaunch:
      result = run_launch(in, out, false);
      return true;
    case Fn::cudaStreamGetAttribute:
    case Fn::cudaStreamSetAttribute:
      result = run_stream_attribute(fn, in, out);
      return true;
    case Fn::cudaLaunchEx:
      result = run_launch_ex(in, out);
      return true;
    case Fn::cudaOccupancyMaxActiveClusters:
      result = run_cluster_occupancy(in, out, false);
      return true;
    case Fn::cudaOccupancyMaxPotentialClusterSize:
      result = run_cluster_occupancy(in, out, true);
      return true;
    case Fn::cudaLaunchCooperative:
      result = run_launch(in, out, true);
      return true;
    case Fn::cudaMemcpyAsync:
      result = run_memcpy(in, out, true);
      return true;
    case Fn::cudaHostRegisterShared:
      result = run_host_register_shared(in, out);
      return true;
    case Fn::cudaHostUnregisterShared:
      result = run_host_unregister_shared(in, out);
      return true;
    case Fn::cudaMemcpyShared:
      result = run_memcpy_shared(in, out, false);
      return true;
    case Fn::cudaMemcpySharedAsync:
      result = run_memcpy_shared(in, out, true);
      return true;
    default:
      return run_array(fn, in, out, result) || run_texture(fn, in, out, result) ||
             run_memcpy_3d(fn, in, out, result) || run_ipc(fn, in, out, result) ||
             run_graph_call(fn, in, out, result) || run_graph_node_call(fn, in, out, result) ||
             run_memory_pool(fn, in, out, result) || run_host_function_call(fn, in, out, result) ||
             run_user_object_call(fn, in, out, result) ||
             run_capture_dependencies_call(fn, in, out, result) ||
             run_pool_sharing(fn, in, out, result) || run_logs(fn, in, out, result) ||
             run_host_staging(fn, in, out, result);
  }
}

}  // namespace gvirtus::cudart

// The backend's handlers of the custom rows of cuda_calls.txt (wire: common/driver_wire.h). Every
// request is hostile until checked: a module image must be exactly as large as its headers say
// and parse as one; a launch's function and stream must be the session's and its parameter
// buffer exactly as large as the kernel's layout; a copy's device range must be the session's.
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/services/host_gates.h"
#include "common/error.h"
#include "common/log.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "elf_nv_info.h"
#include "fatbin.h"
#include "plugins/cuda/backend/array_boxes.h"
#include "plugins/cuda/backend/array_copies.h"
#include "plugins/cuda/backend/capture_dependencies.h"
#include "plugins/cuda/backend/copies_2d.h"
#include "plugins/cuda/backend/graph_calls.h"
#include "plugins/cuda/backend/graph_node_calls.h"
#include "plugins/cuda/backend/graph_nodes.h"
#include "plugins/cuda/backend/graph_queries.h"
#include "plugins/cuda/backend/host_functions.h"
#include "plugins/cuda/backend/host_staging.h"
#include "plugins/cuda/backend/ipc.h"
#include "plugins/cuda/backend/landing_reply.h"
#include "plugins/cuda/backend/links.h"
#include "plugins/cuda/backend/logs.h"
#include "plugins/cuda/backend/managed_batches.h"
#include "plugins/cuda/backend/memory_pools.h"
#include "plugins/cuda/backend/module_loads.h"
#include "plugins/cuda/backend/module_queries.h"
#include "plugins/cuda/backend/own_contexts.h"
#include "plugins/cuda/backend/param_layouts.h"
#include "plugins/cuda/backend/peer_copies.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/backend/shared_host.h"
#include "plugins/cuda/backend/stream_attributes.h"
#include "plugins/cuda/backend/stream_memory_ops.h"
#include "plugins/cuda/backend/textures.h"
#include "plugins/cuda/backend/thread_contexts.h"
#include "plugins/cuda/backend/user_objects.h"
#include "plugins/cuda/backend/virtual_memory.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/jit_options.h"
#include "plugins/cuda/common/module_image.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;

// cuModuleLoadDataEx and cuLibraryLoadData: an image, JIT options, (for a library) library options.
// The backend's copy of the image is its own and freed after the call, so the driver is never
// told it is preserved: it keeps a copy of its own.
template <typename Handle, typename Load>
void load_with_options(WireReader& in, WireWriter& out, CUresult& result, bool library, Load load) {
  const RequestedImage requested = read_requested_image(in);
  JitOptions jit(in);
  if (library) {
    const uint32_t count = in.get<uint32_t>();
    if (count > kMaxJitOptions) raise(ErrorKind::kInvalidInput, "too many library options");
    for (uint32_t i = 0; i < count; ++i) {
      if (in.get<uint32_t>() != CU_LIBRARY_BINARY_IS_PRESERVED) {
        raise(ErrorKind::kInvalidInput, "a library option other than BINARY_IS_PRESERVED");
      }
      in.get<uint64_t>();
    }
  }
  in.expect_end();
  Handle handle = nullptr;
  const bool loaded = load_requested_image(requested, out, result, [&](const void* image) {
    const CUresult r = load(&handle, image, jit);
    if (r == CUDA_SUCCESS) adopt(handle);
    return r;
  });
  if (!loaded) return;  // the client sends the image's bytes
  marshal::put_value(out, result == CUDA_SUCCESS ? handle : nullptr);
  jit.put_outputs(out);
}

// cuCtxCreate: a context of the session's, current on the calling thread's executor (the
// driver makes it so), with no creation parameters (common/driver_wire.h).
void context_create(WireReader& in, WireWriter& out, CUresult& result) {
  const auto flags = in.get<uint32_t>();
  const auto device = in.get<int32_t>();
  in.expect_end();
  CUcontext context = nullptr;
  result = lacks(real().cuCtxCreate_v4);
  if (result == CUDA_SUCCESS) result = real().cuCtxCreate_v4(&context, nullptr, flags, device);
  if (result == CUDA_SUCCESS) {
    note_own_context(context);  // current now: it owns itself and what is made in it
    adopt(context);
  }
  out.put<int32_t>(result);
  marshal::put_value(out, result == CUDA_SUCCESS ? context : nullptr);
}

void module_load_data(WireReader& in, WireWriter& out, CUresult& result) {
  const RequestedImage requested = read_requested_image(in);
  in.expect_end();
  CUmodule module = nullptr;
  result = lacks(real().cuModuleLoadData);
  const bool loaded = load_requested_image(requested, out, result, [&](const void* image) {
    const CUresult r = real().cuModuleLoadData(&module, image);
    if (r == CUDA_SUCCESS) adopt(module);
    return r;
  });
  if (loaded) marshal::put_value(out, result == CUDA_SUCCESS ? module : nullptr);
}

// A launch configuration's attributes from the wire, in aligned memory of ours. Each is a plain
// value but for the events some carry (vetted as the session's) and the graphs-only device node
// (refused: it writes a node handle back into the client's memory).
CUresult launch_attributes(WireReader& in, std::vector<CUlaunchAttribute>& attributes) {
  const auto blob = in.get_blob(kMaxLaunchAttributes * sizeof(CUlaunchAttribute));
  if (blob.size() % sizeof(CUlaunchAttribute) != 0) {
    raise(ErrorKind::kInvalidInput,
          "launch attributes of " + std::to_string(blob.size()) + " bytes");
  }
  attributes.resize(blob.size() / sizeof(CUlaunchAttribute));
  if (!blob.empty()) std::memcpy(attributes.data(), blob.data(), blob.size());
  for (const CUlaunchAttribute& a : attributes) {
    switch (a.id) {
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
        if (const CUresult r = vet(a.value.programmaticEvent.event); r != CUDA_SUCCESS) return r;
        break;
      case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
        if (const CUresult r = vet(a.value.launchCompletionEvent.event); r != CUDA_SUCCESS) {
          return r;
        }
        break;
      case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
        return CUDA_ERROR_INVALID_VALUE;  // graphs only: not valid on a launch
      default:
        break;  // a value the driver validates itself
    }
  }
  return CUDA_SUCCESS;
}

// The configuration of cuLaunchKernelEx and cuOccupancyMaxActiveClusters from its record.
CUlaunchConfig launch_config(const LaunchRequest& r, std::vector<CUlaunchAttribute>& attributes) {
  return CUlaunchConfig{r.grid_x,
                        r.grid_y,
                        r.grid_z,
                        r.block_x,
                        r.block_y,
                        r.block_z,
                        r.shared_bytes,
                        r.stream,
                        attributes.empty() ? nullptr : attributes.data(),
                        static_cast<unsigned>(attributes.size())};
}

enum class LaunchForm { kPlain, kCooperative, kExtensible };

// cuLaunchKernel, cuLaunchCooperativeKernel (which takes the parameters one by one) or
// cuLaunchKernelEx (a configuration with attributes).
void launch_kernel(WireReader& in, WireWriter& out, CUresult& result, LaunchForm form) {
  const auto request = get_record<LaunchRequest>(in);
  std::vector<CUlaunchAttribute> attributes;
  const CUresult attributes_vetted =
      form == LaunchForm::kExtensible ? launch_attributes(in, attributes) : CUDA_SUCCESS;
  const auto params = in.get_blob(kMaxParamBytes);
  in.expect_end();
  // A library's kernel launches as a function (cuLaunchKernel takes either; vet() accepts both,
  // param_layout tells them apart).
  const void* entry = form == LaunchForm::kCooperative
                          ? reinterpret_cast<const void*>(real().cuLaunchCooperativeKernel)
                      : form == LaunchForm::kExtensible
                          ? reinterpret_cast<const void*>(real().cuLaunchKernelEx)
                          : reinterpret_cast<const void*>(real().cuLaunchKernel);
  result = first_failure(CUDA_SUCCESS, vet(request.function),
                         request.function != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE,
                         vet(request.stream), attributes_vetted, lacks(entry));
  std::shared_ptr<const ParamLayout> layout;
  if (result == CUDA_SUCCESS) result = param_layout(request.function, false, layout);
  if (result == CUDA_SUCCESS && params.size() != layout->bytes) {
    result = static_cast<CUresult>(
        services::refuse(CUDA_ERROR_INVALID_VALUE, "cuda", "parameter buffer", request.function,
                         ("of " + std::to_string(params.size()) +
                          " bytes for a kernel that takes " + std::to_string(layout->bytes))
                             .c_str()));
  }
  if (result == CUDA_SUCCESS) {
    // The parameters from memory of our own: aligned as the driver's parameter space is.
    thread_local std::vector<uint64_t> buffer;  // one per executor thread: no allocation per launch
    buffer.resize((params.size() + 7) / 8);
    if (!params.empty()) std::memcpy(buffer.data(), params.data(), params.size());
    auto* base = reinterpret_cast<std::byte*>(buffer.data());
    size_t size = params.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, base, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    // A kernel without parameters gets neither form.
    void** extra_or_none = params.empty() ? nullptr : extra;
    switch (form) {
      case LaunchForm::kCooperative: {
        std::vector<void*> pointers;
        for (const auto& [offset, size] : layout->params) pointers.push_back(base + offset);
        result = real().cuLaunchCooperativeKernel(
            request.function, request.grid_x, request.grid_y, request.grid_z, request.block_x,
            request.block_y, request.block_z, request.shared_bytes, request.stream,
            pointers.empty() ? nullptr : pointers.data());
        break;
      }
      case LaunchForm::kExtensible: {
        const CUlaunchConfig config = launch_config(request, attributes);
        result = real().cuLaunchKernelEx(&config, request.function, nullptr, extra_or_none);
        break;
      }
      case LaunchForm::kPlain:
        result =
            real().cuLaunchKernel(request.function, request.grid_x, request.grid_y, request.grid_z,
                                  request.block_x, request.block_y, request.block_z,
                                  request.shared_bytes, request.stream, nullptr, extra_or_none);
        break;
    }
  }
  out.put<int32_t>(result);
}

// cuOccupancyMaxActiveClusters (`potential_size` false) and cuOccupancyMaxPotentialClusterSize:
// the configuration's attributes vetted as a launch's.
void cluster_occupancy(WireReader& in, WireWriter& out, CUresult& result, bool potential_size) {
  const auto request = get_record<LaunchRequest>(in);
  std::vector<CUlaunchAttribute> attributes;
  const CUresult attributes_vetted = launch_attributes(in, attributes);
  in.expect_end();
  const auto& d = real();
  result = first_failure(CUDA_SUCCESS, vet(request.function),
                         request.function != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE,
                         vet(request.stream), attributes_vetted,
                         potential_size ? lacks(d.cuOccupancyMaxPotentialClusterSize)
                                        : lacks(d.cuOccupancyMaxActiveClusters));
  int clusters = 0;
  if (result == CUDA_SUCCESS) {
    const CUlaunchConfig config = launch_config(request, attributes);
    result = potential_size
                 ? d.cuOccupancyMaxPotentialClusterSize(&clusters, request.function, &config)
                 : d.cuOccupancyMaxActiveClusters(&clusters, request.function, &config);
  }
  out.put<int32_t>(result);
  out.put<int32_t>(result == CUDA_SUCCESS ? clusters : 0);  // the stub reads it either way
}

// A copy's record, checked whatever its host side: a stream only where the call takes one, and
// bytes that travel within one chunk.
CopyRequest copy_request(WireReader& in, bool with_stream, const char* call) {
  const auto request = get_record<CopyRequest>(in);
  if (!with_stream && request.stream != nullptr) {
    raise(ErrorKind::kInvalidInput, std::string("a stream on ") + call);
  }
  if (request.shared_offset == kInlineHost && request.bytes > kCopyChunkBytes) {
    raise(ErrorKind::kInvalidInput, "a copy chunk of " + std::to_string(request.bytes) + " bytes");
  }
  return request;
}

// The driver's copy between `host` (memory of this process) and the request's device range, on
// its stream when the call has one.
CUresult real_to_device(const CopyRequest& request, const void* host, bool with_stream) {
  const auto& r = real();
  if (with_stream) {
    return r.cuMemcpyHtoDAsync_v2 != nullptr
               ? r.cuMemcpyHtoDAsync_v2(request.device, host, request.bytes, request.stream)
               : CUDA_ERROR_NOT_SUPPORTED;
  }
  return r.cuMemcpyHtoD_v2 != nullptr ? r.cuMemcpyHtoD_v2(request.device, host, request.bytes)
                                      : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult real_to_host(void* host, const CopyRequest& request, bool with_stream) {
  const auto& r = real();
  if (with_stream) {
    return r.cuMemcpyDtoHAsync_v2 != nullptr
               ? r.cuMemcpyDtoHAsync_v2(host, request.device, request.bytes, request.stream)
               : CUDA_ERROR_NOT_SUPPORTED;
  }
  return r.cuMemcpyDtoH_v2 != nullptr ? r.cuMemcpyDtoH_v2(host, request.device, request.bytes)
                                      : CUDA_ERROR_NOT_SUPPORTED;
}

// The device range and stream of a copy, vetted; a copy of the client's bytes (not of the shared
// memory, whose pages outlive the call) is refused on a capturing stream.
CUresult vet_copy(const CopyRequest& request, bool with_stream, bool shared) {
  CUresult result = first_failure(CUDA_SUCCESS, vet_device_pointer(request.device, request.bytes),
                                  with_stream ? vet(request.stream) : CUDA_SUCCESS);
  if (result == CUDA_SUCCESS && with_stream && !shared) result = not_capturing(request.stream);
  return result;
}

// cuMemcpyHtoD(Async): the data follows the record - pageable memory of ours, which the driver
// has finished reading when it returns - or is the registered pages of the shared memory the
// record names, which the driver's copy engine reads, asynchronously when the copy is (the
// application synchronises before it reuses them, as natively).
void host_to_device(WireReader& in, WireWriter& out, CUresult& result, bool with_stream) {
  const auto request = copy_request(in, with_stream, "cuMemcpyHtoD");
  const bool shared = request.shared_offset != kInlineHost;
  const void* host = shared ? registered_shared_span(request.shared_offset, request.bytes)
                            : in.get_raw(request.bytes).data();
  in.expect_end();
  result = vet_copy(request, with_stream, shared);
  if (result == CUDA_SUCCESS) result = real_to_device(request, host, with_stream);
  out.put<int32_t>(result);
}

// cuMemcpyDtoH(Async): into the registered pages of the shared memory the record names (the
// driver writes them, asynchronously when the copy is), or else into the reply buffer, the
// landing buffer, so an asynchronous copy is waited for before the reply leaves.
void device_to_host(WireReader& in, WireWriter& out, CUresult& result, bool with_stream) {
  const auto request = copy_request(in, with_stream, "cuMemcpyDtoH");
  in.expect_end();
  const bool shared = request.shared_offset != kInlineHost;
  result = vet_copy(request, with_stream, shared);
  if (shared) {
    std::byte* host = registered_shared_span(request.shared_offset, request.bytes);
    if (result == CUDA_SUCCESS) result = real_to_host(host, request, with_stream);
    out.put<int32_t>(result);
    return;
  }
  if (result == CUDA_SUCCESS && with_stream) {
    result = lacks(real().cuStreamSynchronize);
  }
  landing_reply(out, result, request.bytes, [&](std::byte* landing) {
    const CUresult r = real_to_host(landing, request, with_stream);
    return r == CUDA_SUCCESS && with_stream ? real().cuStreamSynchronize(request.stream) : r;
  });
}

}  // namespace

// The descriptor's session_opened: what a session's worker sets up as it begins.
void session_opened(const SessionInfo& session) {
  open_shared_memory(session);
  open_module_cache(session);
  forget_thread_contexts();
  // A green context and the context made from it are one address to the driver.
  services::session_services().handles.allow_alias(static_cast<uint16_t>(HandleKind::kGreenContext),
                                                   static_cast<uint16_t>(HandleKind::kContext));
  forget_all_nodes();
  forget_conditional_handles(nullptr);
  services::host_gates().open(session.client_gone);
  forget_all_user_objects();
}

bool run_custom(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuModuleLoadData:
      module_load_data(in, out, result);
      return true;
    case Fn::cuCtxCreate_v4:
      context_create(in, out, result);
      return true;
    case Fn::cuModuleLoadDataEx:
      load_with_options<CUmodule>(
          in, out, result, false, [](CUmodule* m, const void* image, JitOptions& jit) {
            if (real().cuModuleLoadDataEx == nullptr) {
              return CUDA_ERROR_NOT_SUPPORTED;
            }
            return real().cuModuleLoadDataEx(m, image, jit.count(), jit.options(), jit.values());
          });
      return true;
    case Fn::cuLibraryLoadData:
      load_with_options<CUlibrary>(
          in, out, result, true, [](CUlibrary* l, const void* image, JitOptions& jit) {
            if (real().cuLibraryLoadData == nullptr) {
              return CUDA_ERROR_NOT_SUPPORTED;
            }
            return real().cuLibraryLoadData(l, image, jit.options(), jit.values(), jit.count(),
                                            nullptr, nullptr, 0);
          });
      return true;
    case Fn::cuLaunchKernel:
      launch_kernel(in, out, result, LaunchForm::kPlain);
      return true;
    case Fn::cuLaunchCooperativeKernel:
      launch_kernel(in, out, result, LaunchForm::kCooperative);
      return true;
    case Fn::cuLaunchKernelEx:
      launch_kernel(in, out, result, LaunchForm::kExtensible);
      return true;
    case Fn::cuOccupancyMaxActiveClusters:
      cluster_occupancy(in, out, result, false);
      return true;
    case Fn::cuOccupancyMaxPotentialClusterSize:
      cluster_occupancy(in, out, result, true);
      return true;
    case Fn::cuMemcpyHtoD_v2:
      host_to_device(in, out, result, false);
      return true;
    case Fn::cuMemcpyHtoDAsync_v2:
      host_to_device(in, out, result, true);
      return true;
    case Fn::cuMemcpyDtoH_v2:
      device_to_host(in, out, result, false);
      return true;
    case Fn::cuMemcpyDtoHAsync_v2:
      device_to_host(in, out, result, true);
      return true;
    default:
      return run_copy_2d(fn, in, out, result) || run_peer_copy(fn, in, out, result) ||
             run_virtual_memory(fn, in, out, result) || run_memory_pool(fn, in, out, result) ||
             run_module_query(fn, in, out, result) || run_link(fn, in, out, result) ||
             run_shared_host(fn, in, out, result) || run_stream_attribute(fn, in, out, result) ||
             run_array_copy(fn, in, out, result) || run_array_box(fn, in, out, result) ||
             run_texture(fn, in, out, result) || run_graph_query(fn, in, out, result) ||
             run_graph_call(fn, in, out, result) || run_ipc(fn, in, out, result) ||
             run_stream_memory_ops(fn, in, out, result) || run_managed_batch(fn, in, out, result) ||
             run_logs(fn, in, out, result) || run_graph_node_call(fn, in, out, result) ||
             run_graph_shape_call(fn, in, out, result) ||
             run_host_function_call(fn, in, out, result) ||
             run_user_object_call(fn, in, out, result) ||
             run_capture_dependencies_call(fn, in, out, result) ||
             run_param_layout(fn, in, out, result) || run_host_staging(fn, in, out, result);
  }
}

}  // namespace gvirtus::cuda

#include "plugins/cudart/backend/modules.h"

#include <cuda.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/log.h"
#include "common/wire_record.h"
#include "plugins/cuda/common/jit_options.h"
#include "plugins/cuda/common/module_image.h"
#include "plugins/cudart/backend/loaded_driver.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/marshal.h"
#include "plugins/cudart/common/module_wire.h"

namespace gvirtus::cudart {
namespace {

struct Library {
  std::vector<std::byte> image;  // kept while loaded: the runtime may read it lazily
  uint64_t expected_bytes = 0;   // of the upload under way or loaded; counted in module_bytes
  cudaLibrary_t handle = nullptr;
};

struct ResolvedKernel {
  // Null once its library is unloaded (cudaLibraryUnload): a launch then names no kernel, which
  // the runtime refuses, rather than a kernel the runtime has freed. Read without the lock.
  std::atomic<cudaKernel_t> handle = nullptr;
  uint64_t library = 0;  // the module id it was resolved in
  uint32_t param_bytes = 0;
  std::vector<uint32_t> offsets;  // of each parameter in the parameter bytes
  std::vector<uint32_t> sizes;    // and its size
};

// The session's calls run on several threads (one per client thread), so the tables are
// guarded. Resolved kernels are never removed while a session runs, and never change but for
// their handle going null as their library is unloaded, so a pointer to one stays valid and may
// be read without the lock. A library is removed as it is unloaded; the stub never reuses an id.
struct State {
  std::mutex mutex;
  std::unordered_map<uint64_t, Library> libraries;
  std::unordered_map<uint64_t, ResolvedKernel> kernels;
  uint64_t module_bytes = 0;
};

State& state() {
  static State s;
  return s;
}

// Called with state().mutex held.
Library& loaded_library(uint64_t id) {
  const auto it = state().libraries.find(id);
  if (it == state().libraries.end() || it->second.handle == nullptr) {
    raise(ErrorKind::kInvalidInput, "module " + std::to_string(id) + " was not loaded");
  }
  return it->second;
}

// Compares the client's layout with the driver's own view, where the driver offers one. Asked of
// the driver under the runtime: a failed probe through the runtime would become the runtime's
// last error, and clearing it would clear an error the program has yet to read.
bool layout_agrees(cudaKernel_t kernel, const std::vector<std::pair<uint32_t, uint32_t>>& layout) {
  using ParamInfo = CUresult (*)(CUkernel, size_t, size_t*, size_t*);
  static const auto param_info = loaded_driver_function<ParamInfo>("cuKernelGetParamInfo");
  if (param_info == nullptr) return true;  // nothing to compare with
  for (size_t i = 0; i < layout.size(); ++i) {
    size_t offset = 0, size = 0;
    if (param_info(reinterpret_cast<CUkernel>(kernel), i, &offset, &size) != CUDA_SUCCESS) {
      return true;  // nothing to compare with
    }
    if (offset != layout[i].first || size != layout[i].second) return false;
  }
  return true;
}

}  // namespace

cudaError_t run_module_load(WireReader& in, WireWriter& out) {
  const auto [id, total, offset] = get_record<ModuleChunk>(in);
  const auto chunk = in.get_blob(kModuleChunkBytes);
  cuda::JitOptions jit(in);  // the runtime's cudaJitOption values are the driver's
  in.expect_end();
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.libraries.contains(id) && s.libraries.size() >= kMaxModulesPerSession) {
    raise(ErrorKind::kInvalidInput,
          "more than " + std::to_string(kMaxModulesPerSession) + " modules in one session");
  }
  Library& library = s.libraries[id];
  if (library.handle != nullptr) raise(ErrorKind::kInvalidInput, "module loaded twice");
  if (offset == 0) {  // a new upload, or a retry of one the runtime refused
    s.module_bytes -= library.expected_bytes;
    library.image.clear();
    library.expected_bytes = 0;
    if (total > kMaxModuleBytes - s.module_bytes) {
      raise(ErrorKind::kInvalidInput,
            "modules of more than " + std::to_string(kMaxModuleBytes) + " bytes in one session");
    }
    // Memory follows the bytes that arrive, not the size the client claims: a session that
    // announces 2 GiB and sends one chunk holds one chunk (found by cudart_fuzz).
    library.image.reserve(static_cast<size_t>(std::min<uint64_t>(total, kModuleChunkBytes)));
    library.expected_bytes = total;
    s.module_bytes += total;
  }
  if (total != library.expected_bytes || offset != library.image.size() ||
      chunk.size() > total - offset) {
    raise(ErrorKind::kInvalidInput, "module chunk out of order or beyond the module's size");
  }
  library.image.insert(library.image.end(), chunk.begin(), chunk.end());
  cudaError_t result = cudaSuccess;
  if (library.image.size() == total) {
    // The runtime takes a pointer and finds the size from the image itself: headers that claim
    // more than arrived, or PTX without its NUL, would have it read past the bytes (a GPU's
    // runtime accepted 16 bytes of text with no NUL).
    if (cuda::module_image_size(library.image.data(), library.image.size()) == 0) {
      GVIRTUS_LOG(kWarning) << "cudart: module " << id
                            << " refused: not a fatbinary, cubin or NUL-terminated PTX that lies "
                               "within its "
                            << total << " bytes";
      result = cudaErrorInvalidKernelImage;
    } else {
      result = ::cudaLibraryLoadData(&library.handle, library.image.data(),
                                     reinterpret_cast<cudaJitOption*>(jit.options()), jit.values(),
                                     jit.count(), nullptr, nullptr, 0);
    }
    if (result != cudaSuccess) {  // a later attempt starts again from offset 0
      library.handle = nullptr;
      library.image = {};
      s.module_bytes -= library.expected_bytes;
      library.expected_bytes = 0;
    }
  }
  out.put<int32_t>(result);
  if (offset + chunk.size() == total) jit.put_outputs(out);  // the load was tried
  return result;
}

cudaError_t run_kernel_resolve(WireReader& in, WireWriter& out) {
  const auto [module, id] = get_record<KernelResolve>(in);
  const std::string name(in.get_string(kMaxSymbolNameBytes));
  const auto [param_bytes, count] = get_record<KernelLayout>(in);
  if (param_bytes > kMaxParamBytes || count > param_bytes) {
    raise(ErrorKind::kInvalidInput, "kernel " + name + ": impossible parameter layout");
  }
  std::vector<std::pair<uint32_t, uint32_t>> layout(count);
  for (auto& [offset, size] : layout) {
    const ParamSlot slot = get_record<ParamSlot>(in);
    offset = slot.offset;
    size = slot.size;
    if (size == 0 || offset > param_bytes || size > param_bytes - offset) {
      raise(ErrorKind::kInvalidInput, "kernel " + name + ": parameter outside its bytes");
    }
  }
  in.expect_end();
  State& s = state();
  std::lock_guard lock(s.mutex);
  Library& library = loaded_library(module);
  cudaKernel_t handle = nullptr;
  cudaError_t result = ::cudaLibraryGetKernel(&handle, library.handle, name.c_str());
  if (result == cudaSuccess && !layout_agrees(handle, layout)) {
    GVIRTUS_LOG(kWarning) << "kernel " << name
                          << ": the client's parameter layout differs from the runtime's";
    result = cudaErrorInvalidKernelImage;
  }
  if (result == cudaSuccess && !s.kernels.contains(id) &&
      s.kernels.size() >= kMaxKernelsPerSession) {
    raise(ErrorKind::kInvalidInput,
          "more than " + std::to_string(kMaxKernelsPerSession) + " kernels in one session");
  }
  if (result == cudaSuccess && !s.kernels.contains(id)) {  // a resolved kernel never changes
    ResolvedKernel& kernel = s.kernels[id];
    kernel.handle = handle;
    kernel.library = module;
    kernel.param_bytes = param_bytes;
    for (const auto& [offset, size] : layout) {
      kernel.offsets.push_back(offset);
      kernel.sizes.push_back(size);
    }
  }
  out.put<int32_t>(result);
  return result;
}

cudaError_t run_module_unload(WireReader& in, WireWriter& out) {
  const auto id = in.get<uint64_t>();
  in.expect_end();
  State& s = state();
  std::lock_guard lock(s.mutex);
  Library& library = loaded_library(id);
  const cudaError_t result = ::cudaLibraryUnload(library.handle);
  out.put<int32_t>(result);
  if (result != cudaSuccess) return result;
  for (auto& [kernel_id, kernel] : s.kernels) {
    if (kernel.library == id) kernel.handle = nullptr;
  }
  s.module_bytes -= library.expected_bytes;
  s.libraries.erase(id);
  return result;
}

cudaError_t run_var_resolve(WireReader& in, WireWriter& out) {
  const auto [module, managed] = get_record<VarResolve>(in);
  if (managed > 1)
    raise(ErrorKind::kInvalidInput, "a variable resolve's managed flag is not 0 or 1");
  const std::string name(in.get_string(kMaxSymbolNameBytes));
  in.expect_end();
  std::lock_guard lock(state().mutex);
  Library& library = loaded_library(module);
  void* address = nullptr;
  size_t bytes = 0;
  const cudaError_t result =
      managed != 0 ? ::cudaLibraryGetManaged(&address, &bytes, library.handle, name.c_str())
                   : ::cudaLibraryGetGlobal(&address, &bytes, library.handle, name.c_str());
  out.put<int32_t>(result);
  if (result == cudaSuccess)
    put_record(out, ResolvedVar{reinterpret_cast<uintptr_t>(address), bytes});
  return result;
}

// The kernel resolved under `id`; throws Error{kInvalidInput} for any other id.
const ResolvedKernel& resolved_kernel(uint64_t id) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto it = s.kernels.find(id);
  if (it == s.kernels.end()) {
    raise(ErrorKind::kInvalidInput, "kernel " + std::to_string(id) + " was not resolved");
  }
  return it->second;
}

KernelArguments kernel_arguments(uint64_t id, std::span<const std::byte> params) {
  const ResolvedKernel& kernel = resolved_kernel(id);
  if (params.size() != kernel.param_bytes) {
    raise(ErrorKind::kInvalidInput, "launch with " + std::to_string(params.size()) +
                                        " parameter bytes for a kernel that takes " +
                                        std::to_string(kernel.param_bytes));
  }
  // This thread's launch buffer: aligned for any parameter, and a pointer to each parameter in
  // it (what cudaLaunchKernel takes). Reused by every launch: the runtime copies the parameters
  // before it returns.
  alignas(16) thread_local std::byte buffer[kMaxParamBytes];
  thread_local std::vector<void*> args;
  std::memcpy(buffer, params.data(), params.size());
  args.clear();
  for (uint32_t offset : kernel.offsets) args.push_back(buffer + offset);
  return {reinterpret_cast<const void*>(kernel.handle.load()),
          args.empty() ? nullptr : args.data()};
}

std::optional<uint64_t> kernel_parameters(const void* function, void* const* args,
                                          std::vector<std::byte>& params) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  // The runtime may report the node's kernel as the handle it was given or as the function of
  // the current context that handle stands for: either names the resolved kernel.
  auto names = [&](const ResolvedKernel& kernel) {
    const cudaKernel_t handle = kernel.handle.load();
    if (handle == nullptr) return false;  // its library is unloaded
    if (reinterpret_cast<const void*>(handle) == function) return true;
    cudaFunction_t resolved = nullptr;
    return ::cudaGetFuncBySymbol(&resolved, reinterpret_cast<const void*>(handle)) == cudaSuccess &&
           reinterpret_cast<const void*>(resolved) == function;
  };
  for (const auto& [id, kernel] : s.kernels) {
    if (!names(kernel)) continue;
    params.assign(kernel.param_bytes, std::byte{0});
    if (args == nullptr && !kernel.offsets.empty()) return std::nullopt;
    for (size_t i = 0; i < kernel.offsets.size(); ++i) {
      std::memcpy(params.data() + kernel.offsets[i], args[i], kernel.sizes[i]);
    }
    return id;
  }
  return std::nullopt;
}

cudaError_t run_launch(WireReader& in, WireWriter& out, bool cooperative) {
  const auto request = get_record<LaunchRequest>(in);
  const dim3 grid(request.grid.x, request.grid.y, request.grid.z);
  const dim3 block(request.block.x, request.block.y, request.block.z);
  const uint64_t shared_bytes = request.shared_bytes;
  const cudaStream_t stream = request.stream;
  const auto params = in.get_blob(kMaxParamBytes);
  in.expect_end();
  const auto [function, arguments] = kernel_arguments(request.kernel, params);
  cudaError_t result = vet(stream);
  if (result == cudaSuccess) {
    result =
        cooperative
            ? ::cudaLaunchCooperativeKernel(function, grid, block, arguments, shared_bytes, stream)
            : ::cudaLaunchKernel(function, grid, block, arguments, shared_bytes, stream);
  }
  out.put<int32_t>(result);
  return result;
}

// cudaLaunchKernelExC with attributes (common/module_wire.h): the stream and what the attributes
// name are vetted before the kernel is looked up, so a refused one answers without ending the
// session; a kernel never resolved ends it, as for cudaLaunch.
cudaError_t run_launch_ex(WireReader& in, WireWriter& out) {
  const auto request = get_record<LaunchRequest>(in);
  std::vector<cudaLaunchAttribute> attributes = get_launch_attributes(in);
  const auto params = in.get_blob(kMaxParamBytes);
  in.expect_end();
  cudaError_t result = vet(request.stream);
  for (const cudaLaunchAttribute& a : attributes) {
    int32_t bits = 0;
    std::memcpy(&bits, &a.id, sizeof bits);
    result = first_failure(result, vet_launch_attribute(bits, a.val));
  }
  if (result == cudaSuccess) {
    const auto [function, arguments] = kernel_arguments(request.kernel, params);
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(request.grid.x, request.grid.y, request.grid.z);
    config.blockDim = dim3(request.block.x, request.block.y, request.block.z);
    config.dynamicSmemBytes = request.shared_bytes;
    config.stream = request.stream;
    config.attrs = attributes.data();
    config.numAttrs = static_cast<unsigned int>(attributes.size());
    result = ::cudaLaunchKernelExC(&config, function, arguments);
  }
  out.put<int32_t>(result);
  return result;
}

cudaError_t run_cluster_occupancy(WireReader& in, WireWriter& out, bool potential_size) {
  const auto request = get_record<LaunchRequest>(in);
  std::vector<cudaLaunchAttribute> attributes;
  if (in.get<uint8_t>() != 0) attributes = get_launch_attributes(in);
  in.expect_end();
  const void* function =
      reinterpret_cast<const void*>(resolved_kernel(request.kernel).handle.load());
  cudaError_t result = vet(request.stream);
  for (const cudaLaunchAttribute& a : attributes) {
    int32_t bits = 0;
    std::memcpy(&bits, &a.id, sizeof bits);
    result = first_failure(result, vet_launch_attribute(bits, a.val));
  }
  int answer = 0;
  if (result == cudaSuccess) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(request.grid.x, request.grid.y, request.grid.z);
    config.blockDim = dim3(request.block.x, request.block.y, request.block.z);
    config.dynamicSmemBytes = request.shared_bytes;
    config.stream = request.stream;
    config.attrs = attributes.empty() ? nullptr : attributes.data();
    config.numAttrs = static_cast<unsigned int>(attributes.size());
    result = potential_size ? ::cudaOccupancyMaxPotentialClusterSize(&answer, function, &config)
                            : ::cudaOccupancyMaxActiveClusters(&answer, function, &config);
  }
  out.put<int32_t>(result);
  if (result == cudaSuccess) out.put<int32_t>(answer);
  return result;
}

void forget_modules() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  for (auto& [id, library] : s.libraries) {
    if (library.handle != nullptr) (void)::cudaLibraryUnload(library.handle);
  }
  s.libraries.clear();
  s.kernels.clear();
  s.module_bytes = 0;
}

cudaError_t run_function_of_kernel(WireReader& in, WireWriter& out) {
  const auto id = in.get<uint64_t>();
  in.expect_end();
  // A library's kernel is the driver's CUkernel: its function in the current context is the
  // driver's to give (NVIDIA's runtime loaded it into this process; none: nothing to give).
  const void* kernel = reinterpret_cast<const void*>(resolved_kernel(id).handle.load());
  using KernelGetFunction = CUresult (*)(CUfunction*, CUkernel);
  const auto get = loaded_driver_function<KernelGetFunction>("cuKernelGetFunction");
  CUfunction function = nullptr;
  const cudaError_t result =
      get != nullptr &&
              get(&function, reinterpret_cast<CUkernel>(const_cast<void*>(kernel))) == CUDA_SUCCESS
          ? cudaSuccess
          : cudaErrorInvalidDeviceFunction;
  out.put<int32_t>(result);
  if (result != cudaSuccess) return result;
  out.put<uint64_t>(reinterpret_cast<uintptr_t>(function));
  adopt(reinterpret_cast<cudaFunction_t>(function));
  return result;
}

const void* kernel_handle(WireReader& in) {
  return reinterpret_cast<const void*>(resolved_kernel(in.get<uint64_t>()).handle.load());
}

}  // namespace gvirtus::cudart

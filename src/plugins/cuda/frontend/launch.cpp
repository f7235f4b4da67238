// cuLaunchKernel in the client libcuda.so.1. The application's arguments are pointers into its
// own memory (kernelParams: one per parameter), so the stub packs them into one parameter buffer
// by the kernel's layout, which it asks the backend's driver for once per function
// (cuFuncGetParamInfo) and keeps. The `extra` form already is such a buffer. The launch is sent
// ahead: the backend checks the buffer against the layout before it launches. What the driver
// refuses at once - a configuration beyond the device's limits, more dynamic shared memory than
// the function allows (its attribute, asked once and forgotten when it may change) - the stub
// refuses at once too, so that the failure is the launch's and not a later call's.
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/log.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/process_session.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/context_answers.h"
#include "plugins/cuda/frontend/kernel_arguments.h"
#include "plugins/cuda/frontend/lazy_libraries.h"
#include "plugins/cuda/frontend/modules.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

// Never destroyed (launches may come from exit handlers, after static objects are gone).
std::mutex& mutex = *new std::mutex;
// Shared: a launch holds its layout while an unload forgets them all (forget_launch_facts).
auto& layouts = *new std::unordered_map<CUfunction, std::shared_ptr<const Layout>>;
// The library kernels the stub handed out, each with the library the application knows it by
// (cuKernelGetLibrary's answer): cuLaunchKernel takes them as functions, and their attributes
// come from the kernel's forms.
auto& kernels = *new std::unordered_map<CUfunction, CUlibrary>;
// Each function's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, as its driver last said.
auto& shared_limits = *new std::unordered_map<CUfunction, unsigned>;

// The function's parameter layout, asked for once, whole (gvirtusKernelParamLayout: the backend
// reads it from its driver, cuKernelGetParamInfo for a library's kernel). Kept until a module or
// library goes (its functions' addresses are the driver's to give again, to code of other
// parameters).
CUresult layout_of(CUfunction function, std::shared_ptr<const Layout>& layout) {
  bool kernel;
  {
    std::lock_guard lock(mutex);
    if (const auto it = layouts.find(function); it != layouts.end()) {
      layout = it->second;
      return CUDA_SUCCESS;
    }
    kernel = kernels.count(function) != 0;
  }
  auto found = std::make_shared<Layout>();
  CUresult malformed = CUDA_SUCCESS;
  {
    const stub::RouteScope route(pool_backend_of_handle(kernel ? "kernel" : "function", function));
    const CUresult result = remote_sync(
        Fn::gvirtusKernelParamLayout,
        [&](WireWriter& w) { put_record(w, ParamLayoutRequest{function}); },
        [&](WireReader& r) {
          const uint32_t count = r.get<uint32_t>();
          if (count > kMaxParams)
            raise(ErrorKind::kInvalidInput, "a layout of too many parameters");
          for (uint32_t i = 0; i < count; ++i) {
            const auto slot = get_record<ParamSlot>(r);
            // A slot outside the parameter space: the layout is refused, as the driver's answer
            // of such an image would be.
            if (slot.size == 0 || uint64_t{slot.offset} + slot.size > kMaxParamBytes) {
              malformed = CUDA_ERROR_INVALID_IMAGE;
            }
            found->params.push_back({slot.offset, slot.size});
            found->bytes = std::max<size_t>(found->bytes, size_t{slot.offset} + slot.size);
          }
        });
    if (result != CUDA_SUCCESS) return result;
  }
  if (malformed != CUDA_SUCCESS) return malformed;
  layout = found;
  std::lock_guard lock(mutex);
  layouts.insert_or_assign(function, std::move(found));
  return CUDA_SUCCESS;
}

// Whether a launch of `function` may have `shared` bytes of dynamic shared memory: at most its
// attribute, asked of the backend once (a kernel's for the current context's device). When the
// attribute cannot be had, the backend judges.
bool shared_fits(CUfunction function, unsigned shared) {
  if (shared == 0) return true;
  bool kernel;
  {
    std::lock_guard lock(mutex);
    if (const auto it = shared_limits.find(function); it != shared_limits.end()) {
      return shared <= it->second;
    }
    kernel = kernels.count(function) != 0;
  }
  int limit = 0;
  CUdevice device = 0;
  const CUresult result =
      kernel
          ? (cuCtxGetDevice(&device) == CUDA_SUCCESS
                 ? cuKernelGetAttribute(&limit, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        reinterpret_cast<CUkernel>(function), device)
                 : CUDA_ERROR_INVALID_CONTEXT)
          : cuFuncGetAttribute(&limit, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function);
  if (result != CUDA_SUCCESS || limit < 0) return true;
  std::lock_guard lock(mutex);
  shared_limits[function] = static_cast<unsigned>(limit);
  return shared <= static_cast<unsigned>(limit);
}

// The parameter buffer of the `extra` form: CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE, to
// CU_LAUNCH_PARAM_END.
CUresult buffer_from_extra(void** extra, const void*& buffer, size_t& bytes) {
  buffer = nullptr;
  bytes = 0;
  bool sized = false;
  for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (i >= 64) return CUDA_ERROR_INVALID_VALUE;  // no terminator in sight
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      buffer = extra[i + 1];
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
      if (extra[i + 1] == nullptr) return CUDA_ERROR_INVALID_VALUE;
      std::memcpy(&bytes, extra[i + 1], sizeof bytes);
      sized = true;
    } else {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (buffer == nullptr || !sized || bytes > kMaxParamBytes) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

}  // namespace

CUresult kernel_layout(CUfunction code, std::shared_ptr<const Layout>& layout) {
  return layout_of(code, layout);
}

CUresult arguments_buffer(CUfunction code, void** params, void** extra,
                          std::vector<std::byte>& packed, const void*& buffer, size_t& bytes) {
  if (extra != nullptr) return buffer_from_extra(extra, buffer, bytes);
  std::shared_ptr<const Layout> layout;
  if (const CUresult r = layout_of(code, layout); r != CUDA_SUCCESS) return r;
  if (!layout->params.empty() && params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  packed.assign(layout->bytes, std::byte{0});
  for (size_t i = 0; i < layout->params.size(); ++i) {
    if (params[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(packed.data() + layout->params[i].offset, params[i], layout->params[i].size);
  }
  buffer = packed.data();
  bytes = packed.size();
  return CUDA_SUCCESS;
}

namespace {

// A device's launch limits, from its attributes (asked once, cached by devices.cpp).
struct Limits {
  unsigned grid[3];
  unsigned block[3];
  unsigned threads;
  unsigned shared;
  bool known = false;
};

Limits limits_of(CUdevice device) {
  const CUdevice_attribute kGrid[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                       CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                       CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  const CUdevice_attribute kBlock[3] = {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
  Limits limits{};
  int value = 0;
  for (int i = 0; i < 3; ++i) {
    if (cuDeviceGetAttribute(&value, kGrid[i], device) != CUDA_SUCCESS) return {};
    limits.grid[i] = static_cast<unsigned>(value);
    if (cuDeviceGetAttribute(&value, kBlock[i], device) != CUDA_SUCCESS) return {};
    limits.block[i] = static_cast<unsigned>(value);
  }
  if (cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device) !=
      CUDA_SUCCESS) {
    return {};
  }
  limits.threads = static_cast<unsigned>(value);
  if (cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device) !=
      CUDA_SUCCESS) {
    return {};
  }
  limits.shared = static_cast<unsigned>(value);
  limits.known = true;
  return limits;
}

// The launch configuration checked as the driver checks it before it enqueues anything, so that
// a launch sent ahead fails where the driver fails, not at a later call: dimensions against the
// device's limits, threads and shared memory against the block's. The limits are read once per
// thread and device (a launch is the hottest call there is: no lock on its path).
CUresult check_configuration(const unsigned grid[3], const unsigned block[3], unsigned shared) {
  CUdevice device = 0;
  if (cuCtxGetDevice(&device) != CUDA_SUCCESS) return CUDA_SUCCESS;  // the backend judges
  thread_local CUdevice cached_device = -1;
  thread_local Limits limits;
  if (device != cached_device || !limits.known) {
    limits = limits_of(device);
    cached_device = device;
  }
  if (!limits.known) return CUDA_SUCCESS;  // the backend judges
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || block[i] == 0 || grid[i] > limits.grid[i] || block[i] > limits.block[i]) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    threads *= block[i];
  }
  if (threads > limits.threads || shared > limits.shared) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// A launch configuration's attributes, checked as far as the stub can: present when counted, and
// few enough for the wire. Their values are the backend's to vet.
CUresult attributes_of(const CUlaunchConfig* config,
                       std::span<const CUlaunchAttribute>& attributes) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (config->numAttrs != 0 && config->attrs == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (config->numAttrs > kMaxLaunchAttributes) return CUDA_ERROR_INVALID_VALUE;
  attributes = {config->attrs, config->numAttrs};
  return CUDA_SUCCESS;
}

// cuLaunchKernel, cuLaunchCooperativeKernel and cuLaunchKernelEx (fn says which; only the last
// sends attributes).
CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned shared, CUstream stream, void** params, void** extra,
                Fn fn = Fn::cuLaunchKernel, std::span<const CUlaunchAttribute> attributes = {}) {
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // In a pool, the launch goes where its function was loaded (pool_routes.h).
  const stub::RouteScope route(pool_backend_of_handle("function", f));
  const unsigned grid[3] = {gx, gy, gz};
  const unsigned block[3] = {bx, by, bz};
  if (const CUresult r = check_configuration(grid, block, shared); r != CUDA_SUCCESS) {
    GVIRTUS_LOG(kDebug) << "libcuda.so.1: a launch of grid " << gx << "x" << gy << "x" << gz
                        << ", block " << bx << "x" << by << "x" << bz << ", " << shared
                        << " bytes of shared memory is beyond the device's limits";
    return r;
  }
  if ((params != nullptr) == (extra != nullptr) && params != nullptr) {
    return CUDA_ERROR_INVALID_VALUE;  // both forms at once
  }
  if (!shared_fits(f, shared)) {
    GVIRTUS_LOG(kDebug) << "libcuda.so.1: a launch with " << shared
                        << " bytes of dynamic shared memory is beyond the function's maximum";
    return CUDA_ERROR_INVALID_VALUE;
  }
  thread_local std::vector<std::byte> packed;
  const void* buffer = nullptr;
  size_t bytes = 0;
  if (const CUresult r = arguments_buffer(f, params, extra, packed, buffer, bytes);
      r != CUDA_SUCCESS) {
    return r;
  }
  const LaunchRequest request{f, gx, gy, gz, bx, by, bz, shared, stream};
  auto encode = [&](WireWriter& w) {
    put_record(w, request);
    if (fn == Fn::cuLaunchKernelEx) w.put_blob(attributes.data(), attributes.size_bytes());
    w.put_blob(buffer, bytes);
  };
  // Attributes (a cluster shape, a priority, an id the driver does not know) bring the driver's
  // errors at once, which the stub cannot foresee: such a launch waits for its answer.
  const CUresult result =
      !attributes.empty() ? remote_sync(fn, encode, [](WireReader&) {}) : remote_async(fn, encode);
  // The kernel may write managed memory: the host fetches it again from now on (after the send,
  // which flushed the host's writes first).
  process_session::managed_invalidate();
  return result;
}

}  // namespace

void note_kernels(CUlibrary library, std::span<const CUkernel> handed_out) {
  std::lock_guard lock(mutex);
  for (const CUkernel kernel : handed_out) kernels[reinterpret_cast<CUfunction>(kernel)] = library;
}

void forget_library_kernels(CUlibrary library) {
  std::lock_guard lock(mutex);
  std::erase_if(kernels, [&](const auto& entry) { return entry.second == library; });
}

void forget_launch_facts() {
  std::lock_guard lock(mutex);
  layouts.clear();
  shared_limits.clear();
}

namespace {

// Setting a function's or a kernel's attribute: a set of the value the attribute already has
// changes nothing, and is answered here (context_answers.h). A set may change the dynamic shared
// memory limit under the handle set or another one for the same code (a kernel and its
// function): after such a change succeeded, the limits known are asked again.
template <typename Set>
CUresult set_attribute(const void* code, CUdevice device, CUfunction_attribute attrib, int value,
                       Set set) {
  if (attribute_already(code, device, attrib, value)) return CUDA_SUCCESS;
  const CUresult result = set();
  if (result != CUDA_SUCCESS) return result;
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    std::lock_guard lock(mutex);
    shared_limits.clear();
  }
  attribute_set(code, device, attrib, value);
  return result;
}

}  // namespace
}  // namespace gvirtus::cuda

extern "C" __attribute__((visibility("default"))) CUresult cuFuncSetAttribute(
    CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return gvirtus::cuda::set_attribute(hfunc, -1, attrib, value, [&] {
    return gvirtus::cuda::remote::cuFuncSetAttribute(hfunc, attrib, value);
  });
}

extern "C" __attribute__((visibility("default"))) CUresult cuKernelSetAttribute(
    CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
  return gvirtus::cuda::set_attribute(kernel, dev, attrib, val, [&] {
    return gvirtus::cuda::remote::cuKernelSetAttribute(attrib, val, kernel, dev);
  });
}

extern "C" __attribute__((visibility("default"))) CUresult cuLaunchKernel(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
    unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
  return gvirtus::cuda::launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                               sharedMemBytes, hStream, kernelParams, extra);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLibraryGetKernel(CUkernel* pKernel,
                                                                              CUlibrary library,
                                                                              const char* name) {
  CUlibrary backend = nullptr;
  if (const CUresult r = gvirtus::cuda::backend_library(library, &backend); r != CUDA_SUCCESS) {
    return r;
  }
  const CUresult result = gvirtus::cuda::remote::cuLibraryGetKernel(pKernel, backend, name);
  if (result == CUDA_SUCCESS && pKernel != nullptr) {
    gvirtus::cuda::note_kernels(library, std::span(pKernel, 1));
  }
  return result;
}

// The library a kernel the stub handed out came from, as the application knows it.
extern "C" __attribute__((visibility("default"))) CUresult cuKernelGetLibrary(CUlibrary* pLib,
                                                                              CUkernel kernel) {
  if (pLib == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = gvirtus::cuda::forked_child_status(); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(gvirtus::cuda::mutex);
  const auto it = gvirtus::cuda::kernels.find(reinterpret_cast<CUfunction>(kernel));
  if (it == gvirtus::cuda::kernels.end()) return CUDA_ERROR_INVALID_HANDLE;
  *pLib = it->second;
  return CUDA_SUCCESS;
}

// The per-thread default stream variant: its null stream is the thread's own.
extern "C" __attribute__((visibility("default"))) CUresult cuLaunchKernel_ptsz(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
    unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
  return gvirtus::cuda::launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                               sharedMemBytes, hStream != nullptr ? hStream : CU_STREAM_PER_THREAD,
                               kernelParams, extra);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLaunchCooperativeKernel(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
    unsigned int sharedMemBytes, CUstream hStream, void** kernelParams) {
  return gvirtus::cuda::launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                               sharedMemBytes, hStream, kernelParams, nullptr,
                               gvirtus::cuda::Fn::cuLaunchCooperativeKernel);
}

// The extensible launch: the configuration's attributes travel with it.
extern "C" __attribute__((visibility("default"))) CUresult cuLaunchKernelEx(
    const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  std::span<const CUlaunchAttribute> attributes;
  if (const CUresult r = gvirtus::cuda::attributes_of(config, attributes); r != CUDA_SUCCESS) {
    return r;
  }
  return gvirtus::cuda::launch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
                               config->blockDimX, config->blockDimY, config->blockDimZ,
                               config->sharedMemBytes, config->hStream, kernelParams, extra,
                               gvirtus::cuda::Fn::cuLaunchKernelEx, attributes);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLaunchKernelEx_ptsz(
    const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUlaunchConfig own = *config;
  if (own.hStream == nullptr) own.hStream = CU_STREAM_PER_THREAD;
  return cuLaunchKernelEx(&own, f, kernelParams, extra);
}

namespace {

// cuOccupancyMaxActiveClusters, cuOccupancyMaxPotentialClusterSize: the kernel and the launch
// configuration with its attributes, asked of the backend's driver.
CUresult cluster_occupancy(gvirtus::cuda::Fn fn, int* answer, CUfunction func,
                           const CUlaunchConfig* config) {
  if (answer == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::span<const CUlaunchAttribute> attributes;
  if (const CUresult r = gvirtus::cuda::attributes_of(config, attributes); r != CUDA_SUCCESS) {
    return r;
  }
  const gvirtus::cuda::LaunchRequest request{func,
                                             config->gridDimX,
                                             config->gridDimY,
                                             config->gridDimZ,
                                             config->blockDimX,
                                             config->blockDimY,
                                             config->blockDimZ,
                                             config->sharedMemBytes,
                                             config->hStream};
  return gvirtus::cuda::remote_sync(
      fn,
      [&](gvirtus::WireWriter& w) {
        gvirtus::put_record(w, request);
        w.put_blob(attributes.data(), attributes.size_bytes());
      },
      [&](gvirtus::WireReader& r) { *answer = r.get<int32_t>(); });
}

}  // namespace

// How many clusters of the configuration's shape fit at once (the cluster dimension is one of
// the configuration's attributes).
extern "C" __attribute__((visibility("default"))) CUresult cuOccupancyMaxActiveClusters(
    int* numClusters, CUfunction func, const CUlaunchConfig* config) {
  return cluster_occupancy(gvirtus::cuda::Fn::cuOccupancyMaxActiveClusters, numClusters, func,
                           config);
}

// The largest cluster the configuration may launch with.
extern "C" __attribute__((visibility("default"))) CUresult cuOccupancyMaxPotentialClusterSize(
    int* clusterSize, CUfunction func, const CUlaunchConfig* config) {
  return cluster_occupancy(gvirtus::cuda::Fn::cuOccupancyMaxPotentialClusterSize, clusterSize, func,
                           config);
}

// Kernel launches and the calls that name a kernel (cudaFunc*, occupancy).
//
// A launch packs the arguments into the kernel's parameter bytes, each at the offset the
// fatbinary's layout gives, and travels as one frame. It is sent without waiting when the launch
// configuration is one no CUDA 13 device rejects (then, as natively, a later failure is reported
// by cudaGetLastError or a synchronising call); otherwise it waits, so the program gets the
// runtime's immediate error exactly. cudaLaunchKernelExC with attributes always waits.
#include <cstring>
#include <vector>

#include "common/wire_record.h"
#include "plugins/cudart/common/module_wire.h"
#include "plugins/cudart/frontend/kernel_arguments.h"
#include "plugins/cudart/frontend/registry.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// Limits every device CUDA 13 supports (sm_75 and later) shares.
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxBlockZ = 64;
constexpr unsigned kMaxGridYZ = 65535;

bool surely_valid(const Kernel& kernel, dim3 grid, dim3 block, size_t shared_bytes) {
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  return grid.x > 0 && grid.y > 0 && grid.z > 0 && grid.y <= kMaxGridYZ && grid.z <= kMaxGridYZ &&
         grid.x <= 0x7fffffffu && threads > 0 && threads <= kMaxThreadsPerBlock &&
         block.z <= kMaxBlockZ &&
         shared_bytes <= static_cast<size_t>(kernel.max_dynamic_shared.load());
}

// With `attributes` (cudaLaunchKernelExC's), the launch always waits (cudaLaunchEx,
// common/module_wire.h).
cudaError_t launch(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                   cudaStream_t stream, bool cooperative = false,
                   const cudaLaunchAttribute* attributes = nullptr, uint32_t attribute_count = 0) {
  if (const cudaError_t failed = known_init_failure(); failed != cudaSuccess) return failed;
  // One parameter image per thread, reused: no allocation per launch once warm.
  thread_local std::vector<std::byte> image;
  Kernel* kernel = nullptr;
  if (const cudaError_t rc = pack_kernel_arguments(function, args, kernel, image);
      rc != cudaSuccess) {
    return rc;
  }
  auto encode = [&](WireWriter& w) {
    put_record(w, LaunchRequest{kernel->id(),
                                {grid.x, grid.y, grid.z},
                                {block.x, block.y, block.z},
                                shared_bytes,
                                stream});
    if (attribute_count > 0) put_launch_attributes(w, attributes, attribute_count);
    w.put_blob(image.data(), image.size());
  };
  const cudaError_t result =
      attribute_count > 0 ? remote_sync(Fn::cudaLaunchEx, encode, [](WireReader&) {})
      : cooperative       ? remote_sync(Fn::cudaLaunchCooperative, encode, [](WireReader&) {})
      : surely_valid(*kernel, grid, block, shared_bytes)
          ? remote_async(Fn::cudaLaunch, encode)
          : remote_sync(Fn::cudaLaunch, encode, [](WireReader&) {});
  // The kernel may write managed memory: the host fetches it again from now on (after the send,
  // which flushed the host's writes first; docs/managed-memory.md).
  process_session::managed_invalidate();
  return result;
}

cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* function, void** args) {
  if (config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr)) {
    return record_local_error(cudaErrorInvalidValue);
  }
  if (config->numAttrs > kMaxLaunchAttributes) return record_local_error(cudaErrorInvalidValue);
  // Without attributes a plain launch, which may go ahead without waiting.
  return launch(function, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                config->stream, false, config->attrs, config->numAttrs);
}

// The kernel a cudaFunc*/occupancy call names, prepared; its id in `id`.
cudaError_t kernel_id(const void* function, const void*& id) {
  Kernel* kernel = find_kernel(function);
  if (kernel == nullptr) {
    return unknown_function();
  }
  if (const cudaError_t rc = prepare(*kernel); rc != cudaSuccess) return rc;
  id = reinterpret_cast<const void*>(kernel->id());
  return cudaSuccess;
}

}  // namespace

cudaError_t pack_kernel_arguments(const void* function, void* const* args, Kernel*& kernel,
                                  std::vector<std::byte>& image) {
  kernel = find_kernel(function);
  if (kernel == nullptr) {
    return unknown_function();
  }
  if (const cudaError_t rc = prepare(*kernel); rc != cudaSuccess) return rc;
  const fatbin::KernelLayout& layout = *kernel->layout;
  if (args == nullptr && !layout.params.empty()) return record_local_error(cudaErrorInvalidValue);
  image.assign(layout.param_bytes, std::byte{0});
  for (size_t i = 0; i < layout.params.size(); ++i) {
    std::memcpy(image.data() + layout.params[i].offset, args[i], layout.params[i].size);
  }
  return cudaSuccess;
}

}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block,
                                                     void** args, size_t shared_bytes,
                                                     cudaStream_t stream) {
  return cr::launch(kernel, grid, block, args, shared_bytes, stream);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLaunchKernel(const void* function, dim3 grid, dim3 block,
                                                   void** args, size_t shared_bytes,
                                                   cudaStream_t stream) {
  return cr::launch(function, grid, block, args, shared_bytes, stream);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config,
                                                      const void* function, void** args) {
  return cr::launch_ex(config, function, args);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void* function, dim3 grid,
                                                              dim3 block, void** args,
                                                              size_t shared_bytes,
                                                              cudaStream_t stream) {
  return cr::launch(function, grid, block, args, shared_bytes, stream, true);
}

namespace {

// cudaOccupancyMaxActiveClusters, cudaOccupancyMaxPotentialClusterSize: the kernel and the launch
// configuration, asked of the backend's runtime (common/module_wire.h).
cudaError_t cluster_occupancy(cr::Fn fn, int* answer, const void* function,
                              const cudaLaunchConfig_t* config) {
  if (answer == nullptr || config == nullptr ||
      (config->numAttrs > 0 && config->attrs == nullptr) ||
      config->numAttrs > cr::kMaxLaunchAttributes) {
    return cr::refuse_locally(cudaErrorInvalidValue);
  }
  const void* id = nullptr;
  if (const cudaError_t rc = cr::kernel_id(function, id); rc != cudaSuccess) return rc;
  return cr::remote_sync(
      fn,
      [&](gvirtus::WireWriter& w) {
        const dim3 grid = config->gridDim, block = config->blockDim;
        gvirtus::put_record(w, cr::LaunchRequest{reinterpret_cast<uintptr_t>(id),
                                                 {grid.x, grid.y, grid.z},
                                                 {block.x, block.y, block.z},
                                                 config->dynamicSmemBytes,
                                                 config->stream});
        w.put<uint8_t>(config->numAttrs > 0 ? 1 : 0);
        if (config->numAttrs > 0) cr::put_launch_attributes(w, config->attrs, config->numAttrs);
      },
      [&](gvirtus::WireReader& r) {
        if (r.remaining() != 0) *answer = r.get<int32_t>();
      });
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaOccupancyMaxActiveClusters(int* numClusters, const void* func,
                                                                 const cudaLaunchConfig_t* config) {
  return cluster_occupancy(cr::Fn::cudaOccupancyMaxActiveClusters, numClusters, func, config);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaOccupancyMaxPotentialClusterSize(
    int* clusterSize, const void* func, const cudaLaunchConfig_t* config) {
  return cluster_occupancy(cr::Fn::cudaOccupancyMaxPotentialClusterSize, clusterSize, func, config);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr,
                                                        const void* function) {
  const void* id = nullptr;
  if (const cudaError_t rc = cr::kernel_id(function, id); rc != cudaSuccess) return rc;
  return cr::remote::cudaFuncGetAttributes(attr, id);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFuncSetAttribute(const void* function, cudaFuncAttribute attr,
                                                       int value) {
  const void* id = nullptr;
  if (const cudaError_t rc = cr::kernel_id(function, id); rc != cudaSuccess) return rc;
  const cudaError_t rc = cr::remote::cudaFuncSetAttribute(id, attr, value);
  if (rc == cudaSuccess && attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    cr::find_kernel(function)->max_dynamic_shared.store(value);
  }
  return rc;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFuncSetCacheConfig(const void* function,
                                                         cudaFuncCache config) {
  const void* id = nullptr;
  if (const cudaError_t rc = cr::kernel_id(function, id); rc != cudaSuccess) return rc;
  return cr::remote::cudaFuncSetCacheConfig(id, config);
}

// Deprecated since CUDA 12.4; the backend's runtime answers as natively.
GVIRTUS_CUDART_EXPORT cudaError_t cudaFuncSetSharedMemConfig(const void* function,
                                                             cudaSharedMemConfig config) {
  const void* id = nullptr;
  if (const cudaError_t rc = cr::kernel_id(function, id); rc != cudaSuccess) return rc;
  return cr::remote::cudaFuncSetSharedMemConfig(id, config);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int* blocks, const void* function, int block_size, size_t dynamic_shared_bytes) {
  const void* id = nullptr;
  if (const cudaError_t rc = cr::kernel_id(function, id); rc != cudaSuccess) return rc;
  return cr::remote::cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, id, block_size,
                                                                   dynamic_shared_bytes);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize,
                                                                            const void* func,
                                                                            int numBlocks,
                                                                            int blockSize) {
  const void* id = nullptr;
  if (const cudaError_t rc = cr::kernel_id(func, id); rc != cudaSuccess) return rc;
  return cr::remote::cudaOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize, id, numBlocks,
                                                               blockSize);
}

// The kernel's device (mangled) name, as the program registered it: answered here, after the
// runtime's initialisation check, with a string that lives as long as the kernel's module.
GVIRTUS_CUDART_EXPORT cudaError_t cudaFuncGetName(const char** name, const void* func) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) {
    return cr::record_local_error(init);
  }
  if (name == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  const cr::Kernel* kernel = cr::find_kernel(func);
  if (kernel == nullptr) return cr::unknown_function();
  *name = kernel->name.c_str();
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* blocks, const void* function, int block_size, size_t dynamic_shared_bytes,
    unsigned flags) {
  const void* id = nullptr;
  if (const cudaError_t rc = cr::kernel_id(function, id); rc != cudaSuccess) return rc;
  return cr::remote::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
      blocks, id, block_size, dynamic_shared_bytes, flags);
}

// Answered from the fatbinary's layout, which the backend checked against its runtime's.
GVIRTUS_CUDART_EXPORT cudaError_t cudaFuncGetParamInfo(const void* function, size_t index,
                                                       size_t* offset, size_t* size) {
  cr::Kernel* kernel = cr::find_kernel(function);
  if (kernel == nullptr) {
    return cr::unknown_function();
  }
  if (const cudaError_t rc = cr::prepare(*kernel); rc != cudaSuccess) return rc;
  const auto& params = kernel->layout->params;
  if (index >= params.size() || offset == nullptr || size == nullptr) {
    return cr::record_local_error(cudaErrorInvalidValue);
  }
  *offset = params[index].offset;
  *size = params[index].size;
  return cudaSuccess;
}

// Module and kernel registration, as nvcc's generated host code performs it at program start
// (crt/host_runtime.h): __cudaRegisterFatBinary, __cudaRegisterFunction, __cudaRegisterVar, ...
//
// This step records what the program registers and answers the call-configuration push/pop
// locally (both never need the GPU). Shipping modules to the backend and launching kernels follow
// with the fatbinary parser (docs/fatbin.md); until then cudaLaunchKernel is not supported.
#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct Module {
  const void* wrapper;  // the program's fatbin wrapper {magic, version, data, ...}
};

struct CallConfiguration {
  dim3 grid;
  dim3 block;
  size_t shared_bytes;
  void* stream;
};

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<Module*>& modules() {
  static std::vector<Module*> list;
  return list;
}

// <<<...>>> pushes a configuration that the kernel's host stub pops on the same thread.
thread_local std::vector<CallConfiguration> t_configurations;

}  // namespace
}  // namespace gvirtus::cudart

using gvirtus::cudart::Module;

GVIRTUS_CUDART_EXPORT void** __cudaRegisterFatBinary(void* fat_cubin) {
  auto* module = new Module{fat_cubin};  // lives until __cudaUnregisterFatBinary
  std::lock_guard lock(gvirtus::cudart::registry_mutex());
  gvirtus::cudart::modules().push_back(module);
  return reinterpret_cast<void**>(module);
}

GVIRTUS_CUDART_EXPORT void __cudaRegisterFatBinaryEnd(void** handle) {
  (void)handle;
}

GVIRTUS_CUDART_EXPORT void __cudaUnregisterFatBinary(void** handle) {
  auto* module = reinterpret_cast<Module*>(handle);
  std::lock_guard lock(gvirtus::cudart::registry_mutex());
  auto& list = gvirtus::cudart::modules();
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (*it == module) {
      list.erase(it);
      delete module;
      return;
    }
  }
}

GVIRTUS_CUDART_EXPORT void __cudaRegisterFunction(void** handle, const char* host_function,
                                                  char* device_function, const char* device_name,
                                                  int thread_limit, uint3* tid, uint3* bid,
                                                  dim3* block_dim, dim3* grid_dim, int* warp_size) {
  // TODO(feature): remember host_function -> (module, device_name) for launches.
  (void)handle, (void)host_function, (void)device_function, (void)device_name;
  (void)thread_limit, (void)tid, (void)bid, (void)block_dim, (void)grid_dim, (void)warp_size;
}

GVIRTUS_CUDART_EXPORT void __cudaRegisterVar(void** handle, char* host_var, char* device_address,
                                             const char* device_name, int ext, size_t size,
                                             int constant, int global) {
  // TODO(feature): remember host_var -> (module, device_name) for symbol copies.
  (void)handle, (void)host_var, (void)device_address, (void)device_name;
  (void)ext, (void)size, (void)constant, (void)global;
}

GVIRTUS_CUDART_EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block,
                                                           size_t shared_bytes,
                                                           struct CUstream_st* stream) {
  gvirtus::cudart::t_configurations.push_back({grid, block, shared_bytes, stream});
  return 0;
}

GVIRTUS_CUDART_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block,
                                                             size_t* shared_bytes, void* stream) {
  auto& stack = gvirtus::cudart::t_configurations;
  if (stack.empty()) return cudaErrorMissingConfiguration;
  const auto c = stack.back();
  stack.pop_back();
  *grid = c.grid;
  *block = c.block;
  *shared_bytes = c.shared_bytes;
  *static_cast<void**>(stream) = c.stream;
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLaunchKernel(const void* function, dim3 grid, dim3 block,
                                                   void** args, size_t shared_bytes,
                                                   cudaStream_t stream) {
  (void)function, (void)grid, (void)block, (void)args, (void)shared_bytes, (void)stream;
  const cudaError_t failed = gvirtus::cudart::known_init_failure();
  return failed != cudaSuccess ? failed : cudaErrorNotSupported;
}

// The entry points nvcc's generated host code calls (crt/host_runtime.h): module, kernel and
// variable registration at program start, the <<<>>> call-configuration stack, and the kernel
// handles of CUDA 13's launch sequence (__cudaGetKernel then __cudaLaunchKernel). All answered
// locally; the backend sees a module only when the program first uses it (registry.h).
#include <cuda_runtime_api.h>

#include <vector>

#include "plugins/cudart/frontend/managed_variables.h"
#include "plugins/cudart/frontend/registration.h"
#include "plugins/cudart/frontend/registry.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct CallConfiguration {
  dim3 grid;
  dim3 block;
  size_t shared_bytes;
  void* stream;
};

// <<<...>>> pushes a configuration that the kernel's host stub pops on the same thread.
thread_local std::vector<CallConfiguration> t_configurations;

cudaError_t get_kernel(cudaKernel_t* handle, const void* function) {
  if (handle == nullptr) return record_local_error(cudaErrorInvalidValue);
  Kernel* kernel = find_kernel(function);
  if (kernel == nullptr) {
    return unknown_function();
  }
  *handle = reinterpret_cast<cudaKernel_t>(kernel);
  return cudaSuccess;
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT void** __cudaRegisterFatBinary(void* fat_cubin) {
  return reinterpret_cast<void**>(cr::register_module(fat_cubin));
}

GVIRTUS_CUDART_EXPORT void __cudaRegisterFatBinaryEnd(void** handle) {
  (void)handle;  // registration is complete; modules are shipped on first use
}

GVIRTUS_CUDART_EXPORT void __cudaUnregisterFatBinary(void** handle) {
  if (handle != nullptr) cr::forget_managed_variables(*reinterpret_cast<cr::Module*>(handle));
  cr::unregister_module(reinterpret_cast<cr::Module*>(handle));
}

GVIRTUS_CUDART_EXPORT void __cudaRegisterFunction(void** handle, const char* host_function,
                                                  char* device_function, const char* device_name,
                                                  int thread_limit, uint3* tid, uint3* bid,
                                                  dim3* block_dim, dim3* grid_dim, int* warp_size) {
  (void)device_function, (void)thread_limit, (void)tid, (void)bid, (void)block_dim;
  (void)grid_dim, (void)warp_size;
  cr::register_kernel(reinterpret_cast<cr::Module*>(handle), host_function, device_name);
}

GVIRTUS_CUDART_EXPORT void __cudaRegisterVar(void** handle, char* host_var, char* device_address,
                                             const char* device_name, int ext, size_t size,
                                             int constant, int global) {
  (void)device_address, (void)ext, (void)constant, (void)global;
  cr::register_variable(reinterpret_cast<cr::Module*>(handle), host_var, device_name, size);
}

GVIRTUS_CUDART_EXPORT void __cudaRegisterManagedVar(void** handle, void** host_slot,
                                                    char* device_address, const char* device_name,
                                                    int ext, size_t size, int constant,
                                                    int global) {
  (void)device_address, (void)ext, (void)constant, (void)global;
  cr::register_managed_variable(reinterpret_cast<cr::Module*>(handle), host_slot, device_name,
                                size);
}

// The host code's first access to a managed variable of the module (its translation unit's
// __nv_init_managed_rt): each variable's address goes into its slot. Nonzero when they are there;
// the host code asks again until they are.
GVIRTUS_CUDART_EXPORT char __cudaInitModule(void** handle) {
  if (handle == nullptr) return 0;
  return cr::init_managed_variables(*reinterpret_cast<cr::Module*>(handle)) ? 1 : 0;
}

GVIRTUS_CUDART_EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block,
                                                           size_t shared_bytes,
                                                           struct CUstream_st* stream) {
  cr::t_configurations.push_back({grid, block, shared_bytes, stream});
  return 0;
}

GVIRTUS_CUDART_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block,
                                                             size_t* shared_bytes, void* stream) {
  auto& stack = cr::t_configurations;
  if (stack.empty()) return cr::record_local_error(cudaErrorMissingConfiguration);
  const auto c = stack.back();
  stack.pop_back();
  *grid = c.grid;
  *block = c.block;
  *shared_bytes = c.shared_bytes;
  *static_cast<void**>(stream) = c.stream;
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* handle, const void* function) {
  return cr::get_kernel(handle, function);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetKernel(cudaKernel_t* handle, const void* function) {
  return cr::get_kernel(handle, function);
}

// The kernel's function in the current context, as the driver has it (a CUfunction): the stub's
// own calls take it for the kernel, and the session holds it for the driver stub's.
GVIRTUS_CUDART_EXPORT cudaError_t cudaGetFuncBySymbol(cudaFunction_t* functionPtr,
                                                      const void* symbolPtr) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) {
    return cr::refuse_locally(init);
  }
  if (functionPtr == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  cr::Kernel* kernel = cr::find_kernel(symbolPtr);
  // Not a kernel (a variable's address, say): the runtime's answer on a GPU (H200, 2026-11-28).
  if (kernel == nullptr) return cr::refuse_locally(cudaErrorInvalidDeviceFunction);
  return cr::function_of(*kernel, *functionPtr);
}

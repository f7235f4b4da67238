// The driver's error log and a device's asynchronous notifications in the client libcuda.so.1
// (rows 297-303): frontend/log_client.h over the driver stub's calls and host callbacks. A
// device's registration goes to its backend, as the pool numbers it there.
#include <cuda.h>

#include "cuda_remote_calls.h"
#include "frontend/log_client.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/frontend/host_functions.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

struct LogTraits {
  using Status = CUresult;
  static constexpr Status kSuccess = CUDA_SUCCESS;
  static constexpr Status kInvalidValue = CUDA_ERROR_INVALID_VALUE;
  static constexpr Fn kRegister = Fn::cuLogsRegisterCallback;
  static constexpr Fn kUnregister = Fn::cuLogsUnregisterCallback;
  static constexpr Fn kDump = Fn::cuLogsDumpToMemory;
  static constexpr Fn kNotification = Fn::gvirtusNotification;
  static Status call(Fn fn, stub::Encoder encode, stub::Decoder decode) {
    return remote_sync(fn, encode, decode);
  }
  static Status token(const gvirtus_host_callback& callback, uint64_t& token) {
    return host_callback_token(callback, token);
  }
  static void drop(uint64_t token) { drop_host_function(token); }
  static void invoke(void* function, void* data, int32_t level, char* text, size_t length) {
    reinterpret_cast<CUlogsCallback>(function)(data, static_cast<CUlogLevel>(level), text, length);
  }
};
using Logs = stub::LogClient<LogTraits>;

struct DeviceTraits : LogTraits {
  static constexpr Fn kRegister = Fn::cuDeviceRegisterAsyncNotification;
  static constexpr Fn kUnregister = Fn::cuDeviceUnregisterAsyncNotification;
  static void invoke(void* function, void* data, int32_t type, uint64_t bytes, uint64_t handle) {
    CUasyncNotificationInfo info{};
    info.type = static_cast<CUasyncNotificationType>(type);
    info.info.overBudget.bytesOverBudget = bytes;
    reinterpret_cast<CUasyncCallback>(function)(
        &info, data, reinterpret_cast<CUasyncCallbackHandle>(static_cast<uintptr_t>(handle)));
  }
};
using DeviceNotifications = stub::DeviceNotificationClient<DeviceTraits>;

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData,
                                               CUlogsCallbackHandle* callback_out) {
  uint64_t handle = 0;
  const CUresult result =
      cr::Logs::register_callback(reinterpret_cast<void*>(callbackFunc), userData, handle);
  if (result == CUDA_SUCCESS && callback_out != nullptr) {
    *callback_out = reinterpret_cast<CUlogsCallbackHandle>(static_cast<uintptr_t>(handle));
  }
  return result;
}

GVIRTUS_EXPORT CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
  return cr::Logs::unregister_callback(reinterpret_cast<uintptr_t>(callback));
}

GVIRTUS_EXPORT CUresult cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer, size_t* size,
                                           unsigned int flags) {
  return cr::Logs::dump_to_memory(iterator, buffer, size, flags);
}

GVIRTUS_EXPORT CUresult cuLogsDumpToFile(CUlogIterator* iterator, const char* pathToFile,
                                         unsigned int flags) {
  return cr::Logs::dump_to_file(iterator, pathToFile, flags);
}

GVIRTUS_EXPORT CUresult cuDeviceRegisterAsyncNotification(CUdevice device,
                                                          CUasyncCallback callbackFunc,
                                                          void* userData,
                                                          CUasyncCallbackHandle* callback) {
  if (callback == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_device(device));
  uint64_t handle = 0;
  const CUresult result = cr::DeviceNotifications::register_callback(
      cr::pool_local_device(device), reinterpret_cast<void*>(callbackFunc), userData, handle);
  if (result == CUDA_SUCCESS) {
    *callback = reinterpret_cast<CUasyncCallbackHandle>(static_cast<uintptr_t>(handle));
  }
  return result;
}

GVIRTUS_EXPORT CUresult cuDeviceUnregisterAsyncNotification(CUdevice device,
                                                            CUasyncCallbackHandle callback) {
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_device(device));
  return cr::DeviceNotifications::unregister_callback(cr::pool_local_device(device),
                                                      reinterpret_cast<uintptr_t>(callback));
}

// The runtime's error log and a device's asynchronous notifications in the runtime stub (rows
// 306-312): frontend/log_client.h over the runtime stub's calls and host callbacks.
#include "frontend/log_client.h"
#include "plugins/cudart/frontend/host_functions.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct LogTraits {
  using Status = cudaError_t;
  static constexpr Status kSuccess = cudaSuccess;
  static constexpr Status kInvalidValue = cudaErrorInvalidValue;
  static constexpr Fn kRegister = Fn::cudaLogsRegisterCallback;
  static constexpr Fn kUnregister = Fn::cudaLogsUnregisterCallback;
  static constexpr Fn kDump = Fn::cudaLogsDumpToMemory;
  static constexpr Fn kNotification = Fn::gvirtusNotification;
  static Status call(Fn fn, Encoder encode, Decoder decode) {
    return remote_sync(fn, encode, decode);
  }
  static Status token(const gvirtus_host_callback& callback, uint64_t& token) {
    return host_callback_token(callback, token);
  }
  static void drop(uint64_t token) { drop_host_function(token); }
  static void invoke(void* function, void* data, int32_t level, char* text, size_t length) {
    reinterpret_cast<cudaLogsCallback_t>(function)(data, static_cast<cudaLogLevel>(level), text,
                                                   length);
  }
};
using Logs = stub::LogClient<LogTraits>;

struct DeviceTraits : LogTraits {
  static constexpr Fn kRegister = Fn::cudaDeviceRegisterAsyncNotification;
  static constexpr Fn kUnregister = Fn::cudaDeviceUnregisterAsyncNotification;
  static void invoke(void* function, void* data, int32_t type, uint64_t bytes, uint64_t handle) {
    cudaAsyncNotificationInfo_t info{};
    info.type = static_cast<cudaAsyncNotificationType>(type);
    info.info.overBudget.bytesOverBudget = bytes;
    reinterpret_cast<cudaAsyncCallback>(function)(
        &info, data, reinterpret_cast<cudaAsyncCallbackHandle_t>(static_cast<uintptr_t>(handle)));
  }
};
using DeviceNotifications = stub::DeviceNotificationClient<DeviceTraits>;

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaLogsRegisterCallback(cudaLogsCallback_t callbackFunc,
                                                           void* userData,
                                                           cudaLogsCallbackHandle* callback_out) {
  if (callbackFunc == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  uint64_t handle = 0;
  const cudaError_t result =
      cr::Logs::register_callback(reinterpret_cast<void*>(callbackFunc), userData, handle);
  if (result != cudaSuccess) return result;
  if (callback_out != nullptr) {
    *callback_out = reinterpret_cast<cudaLogsCallbackHandle>(static_cast<uintptr_t>(handle));
  }
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLogsUnregisterCallback(cudaLogsCallbackHandle callback) {
  return cr::Logs::unregister_callback(reinterpret_cast<uintptr_t>(callback));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLogsDumpToMemory(cudaLogIterator* iterator, char* buffer,
                                                       size_t* size, unsigned int flags) {
  if (buffer == nullptr || size == nullptr || *size == 0) {
    if (size != nullptr) *size = 0;
    return cr::refuse_locally(cudaErrorInvalidValue);
  }
  return cr::Logs::dump_to_memory(iterator, buffer, size, flags);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLogsDumpToFile(cudaLogIterator* iterator,
                                                     const char* pathToFile, unsigned int flags) {
  if (pathToFile == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  return cr::Logs::dump_to_file(iterator, pathToFile, flags);
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaDeviceRegisterAsyncNotification(int device, cudaAsyncCallback callbackFunc, void* userData,
                                    cudaAsyncCallbackHandle_t* callback) {
  if (callbackFunc == nullptr || callback == nullptr) {
    return cr::refuse_locally(cudaErrorInvalidValue);
  }
  uint64_t handle = 0;
  const cudaError_t result = cr::DeviceNotifications::register_callback(
      device, reinterpret_cast<void*>(callbackFunc), userData, handle);
  if (result == cudaSuccess) {
    *callback = reinterpret_cast<cudaAsyncCallbackHandle_t>(static_cast<uintptr_t>(handle));
  }
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaDeviceUnregisterAsyncNotification(int device, cudaAsyncCallbackHandle_t callback) {
  return cr::DeviceNotifications::unregister_callback(device,
                                                      reinterpret_cast<uintptr_t>(callback));
}

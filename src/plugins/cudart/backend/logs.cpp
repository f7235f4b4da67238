// The runtime's error log and a device's asynchronous notifications on the backend (cudart rows
// 306-312): services/log_calls.h over the runtime, as the driver plugin's (plugins/cuda/backend/
// logs.h).
#include "backend/services/log_calls.h"
#include "plugins/cudart/backend/handlers.h"

namespace gvirtus::cudart {
namespace {

void relay_message(void*, cudaLogLevel level, char* message, size_t length) {
  services::relay_log_message(static_cast<int32_t>(level), message, length);
}

void relay_notification(cudaAsyncNotificationInfo_t* info, void* gate, cudaAsyncCallbackHandle_t) {
  if (info != nullptr) {
    services::relay_device_notification(gate, static_cast<int32_t>(info->type),
                                        info->info.overBudget.bytesOverBudget);
  }
}

struct RuntimeLogs {
  using Status = cudaError_t;
  using DeviceHandle = cudaAsyncCallbackHandle_t;
  static constexpr Status kSuccess = cudaSuccess;
  static constexpr Status kInvalidValue = cudaErrorInvalidValue;
  static constexpr Status kOutOfMemory = cudaErrorMemoryAllocation;
  static Status register_log() {
    cudaLogsCallbackHandle handle = nullptr;
    return ::cudaLogsRegisterCallback(relay_message, nullptr, &handle);
  }
  static Status dump(unsigned* iterator, char* buffer, size_t* size, unsigned flags) {
    return ::cudaLogsDumpToMemory(iterator, buffer, size, flags);
  }
  static Status register_device(int device, void* gate, DeviceHandle* handle) {
    return ::cudaDeviceRegisterAsyncNotification(device, relay_notification, gate, handle);
  }
  static Status unregister_device(int device, DeviceHandle handle) {
    return ::cudaDeviceUnregisterAsyncNotification(device, handle);
  }
};
using Calls = services::LogCalls<RuntimeLogs>;

}  // namespace

bool run_logs(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaLogsRegisterCallback:
      result = Calls::register_log(in, out);
      return true;
    case Fn::cudaLogsUnregisterCallback:
      result = Calls::unregister_log(in, out);
      return true;
    case Fn::cudaLogsDumpToMemory:
      result = Calls::dump_to_memory(in, out);
      return true;
    case Fn::cudaDeviceRegisterAsyncNotification:
      result = Calls::register_device(in, out);
      return true;
    case Fn::cudaDeviceUnregisterAsyncNotification:
      result = Calls::unregister_device(in, out);
      return true;
    case Fn::gvirtusNotification:
      services::serve_notification(services::notification_relay(), in, out);
      result = cudaSuccess;
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cudart

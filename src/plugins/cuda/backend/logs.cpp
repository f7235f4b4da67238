// The driver's error log and a device's notifications on the backend (logs.h):
// services/log_calls.h over the backend's driver.
#include "plugins/cuda/backend/logs.h"

#include "backend/services/log_calls.h"
#include "cuda_real.h"
#include "plugins/cuda/backend/request_checks.h"

namespace gvirtus::cuda {
namespace {

void relay_message(void*, CUlogLevel level, char* message, size_t length) {
  services::relay_log_message(static_cast<int32_t>(level), message, length);
}

void relay_notification(CUasyncNotificationInfo* info, void* gate, CUasyncCallbackHandle) {
  if (info != nullptr) {
    services::relay_device_notification(gate, static_cast<int32_t>(info->type),
                                        info->info.overBudget.bytesOverBudget);
  }
}

struct DriverLogs {
  using Status = CUresult;
  using DeviceHandle = CUasyncCallbackHandle;
  static constexpr Status kSuccess = CUDA_SUCCESS;
  static constexpr Status kInvalidValue = CUDA_ERROR_INVALID_VALUE;
  static constexpr Status kOutOfMemory = CUDA_ERROR_OUT_OF_MEMORY;
  static Status register_log() {
    if (const CUresult r = lacks(real().cuLogsRegisterCallback); r != CUDA_SUCCESS) return r;
    CUlogsCallbackHandle handle = nullptr;
    return real().cuLogsRegisterCallback(relay_message, nullptr, &handle);
  }
  static Status dump(unsigned* iterator, char* buffer, size_t* size, unsigned flags) {
    if (const CUresult r = lacks(real().cuLogsDumpToMemory); r != CUDA_SUCCESS) return r;
    return real().cuLogsDumpToMemory(iterator, buffer, size, flags);
  }
  static Status register_device(int device, void* gate, DeviceHandle* handle) {
    if (const CUresult r = lacks(real().cuDeviceRegisterAsyncNotification); r != CUDA_SUCCESS) {
      return r;
    }
    return real().cuDeviceRegisterAsyncNotification(device, relay_notification, gate, handle);
  }
  static Status unregister_device(int device, DeviceHandle handle) {
    if (const CUresult r = lacks(real().cuDeviceUnregisterAsyncNotification); r != CUDA_SUCCESS) {
      return r;
    }
    return real().cuDeviceUnregisterAsyncNotification(device, handle);
  }
};
using Calls = services::LogCalls<DriverLogs>;

}  // namespace

bool run_logs(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuLogsRegisterCallback:
      result = Calls::register_log(in, out);
      return true;
    case Fn::cuLogsUnregisterCallback:
      result = Calls::unregister_log(in, out);
      return true;
    case Fn::cuLogsDumpToMemory:
      result = Calls::dump_to_memory(in, out);
      return true;
    case Fn::cuDeviceRegisterAsyncNotification:
      result = Calls::register_device(in, out);
      return true;
    case Fn::cuDeviceUnregisterAsyncNotification:
      result = Calls::unregister_device(in, out);
      return true;
    case Fn::gvirtusNotification:
      services::serve_notification(services::notification_relay(), in, out);
      result = CUDA_SUCCESS;
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda

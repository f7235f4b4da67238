// The accepting device's error log (accepting_device.cpp, a test double, never GPU evidence): the
// runtime's log API over the lines the device writes (accepting_log), kept in a LogRing
// (common/log_ring.h's CallbackLog) and handed to the registered callbacks on the calling thread.
// And its device's asynchronous notifications: over the memory budget
// GVIRTUS_ACCEPTING_MEMORY_BUDGET sets (accepting_notify_if_over_budget), on a thread of their own,
// as a driver sends them.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/log_ring.h"
#include "common/over_budget_notifier.h"

#define ACCEPTING_DEVICE_EXPORT __attribute__((visibility("default")))

namespace {

using Logs = gvirtus::CallbackLog<cudaLogsCallback_t, cudaLogLevelError>;

Logs& logs() {
  static auto& l = *new Logs;
  return l;
}

using Notifier =
    gvirtus::OverBudgetNotifier<cudaAsyncCallback, cudaAsyncNotificationInfo_t,
                                cudaAsyncCallbackHandle_t, cudaAsyncNotificationTypeOverBudget>;

Notifier& notifier() {
  static auto& n = *new Notifier("GVIRTUS_ACCEPTING_MEMORY_BUDGET");
  return n;
}

}  // namespace

void accepting_notify_if_over_budget(uint64_t allocated) {
  notifier().notify_if_over(allocated);
}

void accepting_log(const std::string& line) {
  logs().write(line);
}

extern "C" {

ACCEPTING_DEVICE_EXPORT cudaError_t cudaLogsRegisterCallback(cudaLogsCallback_t callback,
                                                             void* data,
                                                             cudaLogsCallbackHandle* out) {
  if (callback == nullptr) return cudaErrorInvalidValue;
  const uintptr_t handle = logs().add(callback, data);
  if (out != nullptr) *out = reinterpret_cast<cudaLogsCallbackHandle>(handle);
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaLogsUnregisterCallback(cudaLogsCallbackHandle callback) {
  return logs().remove(reinterpret_cast<uintptr_t>(callback)) ? cudaSuccess : cudaErrorInvalidValue;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaLogsCurrent(cudaLogIterator* iterator, unsigned int flags) {
  if (iterator == nullptr || flags != 0) return cudaErrorInvalidValue;
  *iterator = logs().current();
  return cudaSuccess;
}

// From the iterator (or all that is kept), as many of the newest whole lines as `*size` holds
// with the NUL; none fitting while there are some: cudaErrorInvalidValue, as the runtime.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaLogsDumpToMemory(cudaLogIterator* iterator, char* buffer,
                                                         size_t* size, unsigned int flags) {
  if (buffer == nullptr || size == nullptr || flags != 0) return cudaErrorInvalidValue;
  return logs().dump(iterator, buffer, size) ? cudaSuccess : cudaErrorInvalidValue;
}

// Device 0 only, the device's one.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaDeviceRegisterAsyncNotification(
    int device, cudaAsyncCallback callback, void* data, cudaAsyncCallbackHandle_t* out) {
  if (callback == nullptr || out == nullptr) return cudaErrorInvalidValue;
  if (device != 0) return cudaErrorInvalidDevice;
  *out = notifier().add(device, callback, data);
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t
cudaDeviceUnregisterAsyncNotification(int device, cudaAsyncCallbackHandle_t callback) {
  return notifier().remove(device, callback) ? cudaSuccess : cudaErrorInvalidValue;
}

}  // extern "C"

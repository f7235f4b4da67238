// The simulated device's error log: every failed call (guarded()) writes a line, "simulated
// device: CUDA error N", kept in a CallbackLog (common/log_ring.h) and handed to the registered
// callbacks on the calling thread, as the driver calls them during the call. And its devices'
// asynchronous notifications: over a memory budget the backend's environment sets
// (notify_if_over_budget).
#include <string>

#include "common/log_ring.h"
#include "common/over_budget_notifier.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

using Logs = gvirtus::CallbackLog<CUlogsCallback, CU_LOG_LEVEL_ERROR>;

Logs& logs() {
  static auto& l = *new Logs;  // the runtime may fail calls from its exit handlers
  return l;
}

using Notifier =
    gvirtus::OverBudgetNotifier<CUasyncCallback, CUasyncNotificationInfo, CUasyncCallbackHandle,
                                CU_ASYNC_NOTIFICATION_TYPE_OVER_BUDGET>;

Notifier& notifier() {
  static auto& n = *new Notifier("GVIRTUS_SIMULATED_MEMORY_BUDGET");
  return n;
}

}  // namespace

namespace gvirtus::simulated {

void notify_if_over_budget(uint64_t allocated) noexcept {
  notifier().notify_if_over(allocated);
}

void log_failure(CUresult result) noexcept {
  try {
    logs().write("simulated device: CUDA error " + std::to_string(result));
  } catch (...) {
    // Only the log line is lost.
  }
}

}  // namespace gvirtus::simulated

GVIRTUS_SIMULATED_EXPORT CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc,
                                                         void* userData,
                                                         CUlogsCallbackHandle* callback_out) {
  if (callbackFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const uintptr_t handle = logs().add(callbackFunc, userData);
  if (callback_out != nullptr) *callback_out = reinterpret_cast<CUlogsCallbackHandle>(handle);
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
  return logs().remove(reinterpret_cast<uintptr_t>(callback)) ? CUDA_SUCCESS
                                                              : CUDA_ERROR_INVALID_VALUE;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLogsCurrent(CUlogIterator* iterator_out, unsigned int flags) {
  if (iterator_out == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  *iterator_out = logs().current();
  return CUDA_SUCCESS;
}

// From the iterator (or all that is kept), as many of the newest whole lines as `*size` holds
// with the NUL; none fitting while there are some: CUDA_ERROR_INVALID_VALUE, as the driver.
GVIRTUS_SIMULATED_EXPORT CUresult cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer,
                                                     size_t* size, unsigned int flags) {
  if (buffer == nullptr || size == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return logs().dump(iterator, buffer, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuDeviceRegisterAsyncNotification(CUdevice device, CUasyncCallback callbackFunc, void* userData,
                                  CUasyncCallbackHandle* callback) {
  if (callbackFunc == nullptr || callback == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUresult known = sim::guarded([&](sim::State& s) {
    return sim::valid_device(s, device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
  });
  if (known != CUDA_SUCCESS) return known;
  *callback = notifier().add(device, callbackFunc, userData);
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuDeviceUnregisterAsyncNotification(CUdevice device, CUasyncCallbackHandle callback) {
  return notifier().remove(device, callback) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

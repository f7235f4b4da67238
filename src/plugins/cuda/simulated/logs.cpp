// The simulated device's error log: every failed call (guarded()) writes a line, "simulated
// device: CUDA error N", kept in a LogRing (common/log_ring.h) and handed to the registered
// callbacks on the calling thread, as the driver calls them during the call. And its devices'
// asynchronous notifications: over a memory budget the backend's environment sets
// (notify_if_over_budget).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/log_ring.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

struct Logs {
  std::mutex mutex;
  gvirtus::LogRing ring;
  std::map<uintptr_t, std::pair<CUlogsCallback, void*>> callbacks;
  uintptr_t next_handle = 1;
};

Logs& logs() {
  static auto& l = *new Logs;  // the runtime may fail calls from its exit handlers
  return l;
}

struct DeviceCallback {
  CUdevice device;
  CUasyncCallback function;
  void* data;
};

struct DeviceCallbacks {
  std::mutex mutex;
  std::map<uintptr_t, DeviceCallback> registered;
  uintptr_t next_handle = 1;
};

DeviceCallbacks& device_callbacks() {
  static auto& d = *new DeviceCallbacks;
  return d;
}

// GVIRTUS_SIMULATED_MEMORY_BUDGET, in bytes; 0 (none) when unset or not a number.
uint64_t memory_budget() {
  static const uint64_t budget = [] {
    const char* text = std::getenv("GVIRTUS_SIMULATED_MEMORY_BUDGET");
    char* end = nullptr;
    const unsigned long long value = text != nullptr ? std::strtoull(text, &end, 10) : 0;
    return text != nullptr && end != text && *end == '\0' ? uint64_t{value} : uint64_t{0};
  }();
  return budget;
}

}  // namespace

namespace gvirtus::simulated {

void notify_if_over_budget(uint64_t allocated) noexcept {
  const uint64_t budget = memory_budget();
  if (budget == 0 || allocated <= budget) return;
  try {
    std::vector<std::pair<uintptr_t, DeviceCallback>> callbacks;
    {
      DeviceCallbacks& d = device_callbacks();
      std::lock_guard lock(d.mutex);
      callbacks.assign(d.registered.begin(), d.registered.end());
    }
    if (callbacks.empty()) return;
    std::thread([callbacks = std::move(callbacks), over = allocated - budget] {
      for (const auto& [handle, callback] : callbacks) {
        CUasyncNotificationInfo info{};
        info.type = CU_ASYNC_NOTIFICATION_TYPE_OVER_BUDGET;
        info.info.overBudget.bytesOverBudget = over;
        callback.function(&info, callback.data, reinterpret_cast<CUasyncCallbackHandle>(handle));
      }
    }).detach();
  } catch (...) {
    // The notification is lost, as a driver's may be.
  }
}

void log_failure(CUresult result) noexcept {
  try {
    const std::string line = "simulated device: CUDA error " + std::to_string(result);
    std::vector<std::pair<CUlogsCallback, void*>> callbacks;
    {
      Logs& l = logs();
      std::lock_guard lock(l.mutex);
      l.ring.append(line);
      for (const auto& [handle, callback] : l.callbacks) callbacks.push_back(callback);
    }
    std::string message = line;  // the callbacks' own copy: they may write into it
    for (const auto& [function, data] : callbacks) {
      function(data, CU_LOG_LEVEL_ERROR, message.data(), message.size());
    }
  } catch (...) {
    // Only the log line is lost.
  }
}

}  // namespace gvirtus::simulated

GVIRTUS_SIMULATED_EXPORT CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc,
                                                         void* userData,
                                                         CUlogsCallbackHandle* callback_out) {
  if (callbackFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Logs& l = logs();
  std::lock_guard lock(l.mutex);
  const uintptr_t handle = l.next_handle++;
  l.callbacks[handle] = {callbackFunc, userData};
  if (callback_out != nullptr) *callback_out = reinterpret_cast<CUlogsCallbackHandle>(handle);
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
  Logs& l = logs();
  std::lock_guard lock(l.mutex);
  return l.callbacks.erase(reinterpret_cast<uintptr_t>(callback)) != 0 ? CUDA_SUCCESS
                                                                       : CUDA_ERROR_INVALID_VALUE;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLogsCurrent(CUlogIterator* iterator_out, unsigned int flags) {
  if (iterator_out == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Logs& l = logs();
  std::lock_guard lock(l.mutex);
  *iterator_out = l.ring.current();
  return CUDA_SUCCESS;
}

// From the iterator (or all that is kept), as many of the newest whole lines as `*size` holds
// with the NUL; none fitting while there are some: CUDA_ERROR_INVALID_VALUE, as the driver.
GVIRTUS_SIMULATED_EXPORT CUresult cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer,
                                                     size_t* size, unsigned int flags) {
  if (buffer == nullptr || size == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Logs& l = logs();
  std::lock_guard lock(l.mutex);
  return l.ring.dump(iterator, buffer, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuDeviceRegisterAsyncNotification(CUdevice device, CUasyncCallback callbackFunc, void* userData,
                                  CUasyncCallbackHandle* callback) {
  if (callbackFunc == nullptr || callback == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUresult known = sim::guarded([&](sim::State& s) {
    return sim::valid_device(s, device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
  });
  if (known != CUDA_SUCCESS) return known;
  DeviceCallbacks& d = device_callbacks();
  std::lock_guard lock(d.mutex);
  const uintptr_t handle = d.next_handle++;
  d.registered[handle] = {device, callbackFunc, userData};
  *callback = reinterpret_cast<CUasyncCallbackHandle>(handle);
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuDeviceUnregisterAsyncNotification(CUdevice device, CUasyncCallbackHandle callback) {
  DeviceCallbacks& d = device_callbacks();
  std::lock_guard lock(d.mutex);
  const auto it = d.registered.find(reinterpret_cast<uintptr_t>(callback));
  if (it == d.registered.end() || it->second.device != device) return CUDA_ERROR_INVALID_VALUE;
  d.registered.erase(it);
  return CUDA_SUCCESS;
}

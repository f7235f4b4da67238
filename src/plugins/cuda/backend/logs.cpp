// The driver's error log on the backend (logs.h).
#include "plugins/cuda/backend/logs.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/services/notification_relay.h"
#include "common/error.h"
#include "common/log_dump_wire.h"
#include "cuda_real.h"
#include "plugins/cuda/backend/request_checks.h"

namespace gvirtus::cuda {
namespace {

// The driver's callback: each message goes to the client's registrations.
void relay_message(void*, CUlogLevel level, char* message, size_t length) {
  services::notification_relay().deliver(
      log_message_payload(static_cast<int32_t>(level), message, length));
}

// The plugin's own callback, registered with the driver once, at the first registration.
CUresult register_with_driver() {
  static std::mutex mutex;
  static bool registered = false;
  std::lock_guard lock(mutex);
  if (registered) return CUDA_SUCCESS;
  if (const CUresult r = lacks(real().cuLogsRegisterCallback); r != CUDA_SUCCESS) return r;
  CUlogsCallbackHandle handle = nullptr;
  const CUresult result = real().cuLogsRegisterCallback(relay_message, nullptr, &handle);
  registered = result == CUDA_SUCCESS;
  return result;
}

void register_callback(WireReader& in, WireWriter& out, CUresult& result) {
  const auto token = in.get<uint64_t>();
  in.expect_end();
  if (token == 0) raise(ErrorKind::kInvalidInput, "a log callback without a token");
  services::Gate* gate = nullptr;
  result = register_with_driver();
  if (result == CUDA_SUCCESS) {
    gate = services::notification_relay().add(token, services::NotificationRelay::Kind::kLog);
    if (gate == nullptr) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? reinterpret_cast<uintptr_t>(gate) : 0);
}

// The driver's callback for one registration (its gate, the callback's data): the notification
// goes to that registration alone.
void relay_device_notification(CUasyncNotificationInfo* info, void* gate, CUasyncCallbackHandle) {
  if (info == nullptr) return;
  services::notification_relay().deliver_to(
      static_cast<const services::Gate*>(gate),
      device_notification_payload({static_cast<int32_t>(info->type),
                                   info->info.overBudget.bytesOverBudget,
                                   reinterpret_cast<uintptr_t>(gate)}));
}

// Each registration's driver handle, by its gate (the handle the client holds).
std::mutex device_mutex;
std::unordered_map<const void*, CUasyncCallbackHandle> device_handles;  // one session per worker

void register_device_callback(WireReader& in, WireWriter& out, CUresult& result) {
  const auto device = in.get<int32_t>();
  const auto token = in.get<uint64_t>();
  in.expect_end();
  if (token == 0) raise(ErrorKind::kInvalidInput, "a device notification without a token");
  services::Gate* gate = nullptr;
  result = lacks(real().cuDeviceRegisterAsyncNotification);
  if (result == CUDA_SUCCESS) {
    gate = services::notification_relay().add(token, services::NotificationRelay::Kind::kDevice);
    if (gate == nullptr) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  CUasyncCallbackHandle handle = nullptr;
  if (result == CUDA_SUCCESS) {
    result =
        real().cuDeviceRegisterAsyncNotification(device, relay_device_notification, gate, &handle);
    if (result != CUDA_SUCCESS) {
      services::notification_relay().remove(gate, services::NotificationRelay::Kind::kDevice);
    }
  }
  if (result == CUDA_SUCCESS) {
    std::lock_guard lock(device_mutex);
    device_handles[gate] = handle;
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? reinterpret_cast<uintptr_t>(gate) : 0);
}

void unregister_device_callback(WireReader& in, WireWriter& out, CUresult& result) {
  const auto device = in.get<int32_t>();
  const auto* gate = reinterpret_cast<const void*>(static_cast<uintptr_t>(in.get<uint64_t>()));
  in.expect_end();
  CUasyncCallbackHandle handle = nullptr;
  {
    std::lock_guard lock(device_mutex);
    const auto it = device_handles.find(gate);
    result = it != device_handles.end() ? lacks(real().cuDeviceUnregisterAsyncNotification)
                                        : CUDA_ERROR_INVALID_VALUE;
    if (result == CUDA_SUCCESS) handle = it->second;
  }
  if (result == CUDA_SUCCESS) result = real().cuDeviceUnregisterAsyncNotification(device, handle);
  if (result == CUDA_SUCCESS) {
    services::notification_relay().remove(gate, services::NotificationRelay::Kind::kDevice);
    std::lock_guard lock(device_mutex);
    device_handles.erase(gate);
  }
  out.put<int32_t>(result);
}

void dump_to_memory(WireReader& in, WireWriter& out, CUresult& result) {
  const bool has_iterator = in.get<uint8_t>() != 0;
  CUlogIterator iterator = in.get<uint32_t>();
  const auto capacity = in.get<uint64_t>();
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  if (capacity == 0 || capacity > kMaxLogDumpBytes) {
    raise(ErrorKind::kInvalidInput, "a log dump of " + std::to_string(capacity) + " bytes");
  }
  std::vector<char> text(capacity, '\0');
  size_t size = capacity;
  result = lacks(real().cuLogsDumpToMemory);
  if (result == CUDA_SUCCESS) {
    result =
        real().cuLogsDumpToMemory(has_iterator ? &iterator : nullptr, text.data(), &size, flags);
  }
  if (result != CUDA_SUCCESS || size >= capacity) size = 0;  // never more than was given
  out.put<int32_t>(result);
  out.put<uint32_t>(iterator);
  out.put_blob(text.data(), size);
}

}  // namespace

bool run_logs(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuLogsRegisterCallback:
      register_callback(in, out, result);
      return true;
    case Fn::cuLogsUnregisterCallback: {
      const auto handle = in.get<uint64_t>();
      in.expect_end();
      result = services::notification_relay().remove(
                   reinterpret_cast<const void*>(static_cast<uintptr_t>(handle)),
                   services::NotificationRelay::Kind::kLog)
                   ? CUDA_SUCCESS
                   : CUDA_ERROR_INVALID_VALUE;
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cuLogsDumpToMemory:
      dump_to_memory(in, out, result);
      return true;
    case Fn::cuDeviceRegisterAsyncNotification:
      register_device_callback(in, out, result);
      return true;
    case Fn::cuDeviceUnregisterAsyncNotification:
      unregister_device_callback(in, out, result);
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

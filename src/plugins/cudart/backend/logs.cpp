// The runtime's error log and a device's asynchronous notifications on the backend (cudart rows
// 306-312; wire: src/common/log_dump_wire.h),
// as the driver plugin's (plugins/cuda/backend/logs.h): callbacks relayed to the client through
// the plugin's notification relay (services/notification_relay.h), dumps to memory bounded by the
// runtime's own buffer.
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/services/notification_relay.h"
#include "common/error.h"
#include "common/log_dump_wire.h"
#include "plugins/cudart/backend/handlers.h"

namespace gvirtus::cudart {
namespace {

void relay_message(void*, cudaLogLevel level, char* message, size_t length) {
  services::notification_relay().deliver(
      log_message_payload(static_cast<int32_t>(level), message, length));
}

// The plugin's own callback, registered with the runtime once, at the first registration.
cudaError_t register_with_runtime() {
  static std::mutex mutex;
  static bool registered = false;
  std::lock_guard lock(mutex);
  if (registered) return cudaSuccess;
  cudaLogsCallbackHandle handle = nullptr;
  const cudaError_t result = ::cudaLogsRegisterCallback(relay_message, nullptr, &handle);
  registered = result == cudaSuccess;
  return result;
}

void register_callback(WireReader& in, WireWriter& out, cudaError_t& result) {
  const auto token = in.get<uint64_t>();
  in.expect_end();
  if (token == 0) raise(ErrorKind::kInvalidInput, "a log callback without a token");
  services::Gate* gate = nullptr;
  result = register_with_runtime();
  if (result == cudaSuccess) {
    gate = services::notification_relay().add(token, services::NotificationRelay::Kind::kLog);
    if (gate == nullptr) result = cudaErrorMemoryAllocation;
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == cudaSuccess ? reinterpret_cast<uintptr_t>(gate) : 0);
}

// The runtime's callback for one registration (its gate, the callback's data): the notification
// goes to that registration alone.
void relay_device_notification(cudaAsyncNotificationInfo_t* info, void* gate,
                               cudaAsyncCallbackHandle_t) {
  if (info == nullptr) return;
  services::notification_relay().deliver_to(
      static_cast<const services::Gate*>(gate),
      device_notification_payload({static_cast<int32_t>(info->type),
                                   info->info.overBudget.bytesOverBudget,
                                   reinterpret_cast<uintptr_t>(gate)}));
}

// Each registration's runtime handle, by its gate (the handle the client holds).
std::mutex device_mutex;
std::unordered_map<const void*, cudaAsyncCallbackHandle_t> device_handles;

void register_device_callback(WireReader& in, WireWriter& out, cudaError_t& result) {
  const auto device = in.get<int32_t>();
  const auto token = in.get<uint64_t>();
  in.expect_end();
  if (token == 0) raise(ErrorKind::kInvalidInput, "a device notification without a token");
  services::Gate* gate =
      services::notification_relay().add(token, services::NotificationRelay::Kind::kDevice);
  result = gate != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
  cudaAsyncCallbackHandle_t handle = nullptr;
  if (result == cudaSuccess) {
    result =
        ::cudaDeviceRegisterAsyncNotification(device, relay_device_notification, gate, &handle);
    if (result != cudaSuccess) {
      services::notification_relay().remove(gate, services::NotificationRelay::Kind::kDevice);
    }
  }
  if (result == cudaSuccess) {
    std::lock_guard lock(device_mutex);
    device_handles[gate] = handle;
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == cudaSuccess ? reinterpret_cast<uintptr_t>(gate) : 0);
}

void unregister_device_callback(WireReader& in, WireWriter& out, cudaError_t& result) {
  const auto device = in.get<int32_t>();
  const auto* gate = reinterpret_cast<const void*>(static_cast<uintptr_t>(in.get<uint64_t>()));
  in.expect_end();
  cudaAsyncCallbackHandle_t handle = nullptr;
  {
    std::lock_guard lock(device_mutex);
    const auto it = device_handles.find(gate);
    result = it != device_handles.end() ? cudaSuccess : cudaErrorInvalidValue;
    if (result == cudaSuccess) handle = it->second;
  }
  if (result == cudaSuccess) result = ::cudaDeviceUnregisterAsyncNotification(device, handle);
  if (result == cudaSuccess) {
    services::notification_relay().remove(gate, services::NotificationRelay::Kind::kDevice);
    std::lock_guard lock(device_mutex);
    device_handles.erase(gate);
  }
  out.put<int32_t>(result);
}

void dump_to_memory(WireReader& in, WireWriter& out, cudaError_t& result) {
  const bool has_iterator = in.get<uint8_t>() != 0;
  cudaLogIterator iterator = in.get<uint32_t>();
  const auto capacity = in.get<uint64_t>();
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  if (capacity == 0 || capacity > kMaxLogDumpBytes) {
    raise(ErrorKind::kInvalidInput, "a log dump of " + std::to_string(capacity) + " bytes");
  }
  std::vector<char> text(capacity, '\0');
  size_t size = capacity;
  result = ::cudaLogsDumpToMemory(has_iterator ? &iterator : nullptr, text.data(), &size, flags);
  if (result != cudaSuccess || size >= capacity) size = 0;  // never more than was given
  out.put<int32_t>(result);
  out.put<uint32_t>(iterator);
  out.put_blob(text.data(), size);
}

}  // namespace

bool run_logs(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaLogsRegisterCallback:
      register_callback(in, out, result);
      return true;
    case Fn::cudaLogsUnregisterCallback: {
      const auto handle = in.get<uint64_t>();
      in.expect_end();
      result = services::notification_relay().remove(
                   reinterpret_cast<const void*>(static_cast<uintptr_t>(handle)),
                   services::NotificationRelay::Kind::kLog)
                   ? cudaSuccess
                   : cudaErrorInvalidValue;
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cudaLogsDumpToMemory:
      dump_to_memory(in, out, result);
      return true;
    case Fn::cudaDeviceRegisterAsyncNotification:
      register_device_callback(in, out, result);
      return true;
    case Fn::cudaDeviceUnregisterAsyncNotification:
      unregister_device_callback(in, out, result);
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

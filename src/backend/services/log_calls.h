// The backend's half of a library's error log and device notifications, written once for the
// cuda and cudart plugins (cuda rows 297-303, cudart rows 306-312; wire:
// src/common/log_dump_wire.h; the relay: notification_relay.h). Each plugin gives its library's
// calls as Traits:
//   Status, kSuccess, kInvalidValue, kOutOfMemory;
//   Status register_log()                      its own callback with the library, which hands
//                                              each message to relay_log_message;
//   Status dump(unsigned* iterator, char* buffer, size_t* size, unsigned flags);
//   DeviceHandle, Status register_device(int device, void* gate, DeviceHandle*)
//                                              a callback of its own for one registration, whose
//                                              data is the gate, handing each notification to
//                                              relay_device_notification;
//   Status unregister_device(int device, DeviceHandle).
// The plugin routes its rows to LogCalls' functions; each reads the request and writes the reply.
// Thread affinity: any thread; one session per worker process.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/services/notification_relay.h"
#include "common/error.h"
#include "common/log_dump_wire.h"
#include "common/wire.h"

namespace gvirtus::services {

// What the plugins' library callbacks hand the relay.
inline void relay_log_message(int32_t level, const char* message, size_t length) {
  notification_relay().deliver(log_message_payload(level, message, length));
}
inline void relay_device_notification(const void* gate, int32_t type, uint64_t bytes_over_budget) {
  notification_relay().deliver_to(
      static_cast<const Gate*>(gate),
      device_notification_payload({type, bytes_over_budget, reinterpret_cast<uintptr_t>(gate)}));
}

template <typename Traits>
class LogCalls {
 public:
  using Status = typename Traits::Status;

  // Request u64 the callback's token; reply the status, u64 the registration's handle.
  static Status register_log(WireReader& in, WireWriter& out) {
    const auto token = in.get<uint64_t>();
    in.expect_end();
    if (token == 0) raise(ErrorKind::kInvalidInput, "a log callback without a token");
    Gate* gate = nullptr;
    Status result = registered_with_library();
    if (result == Traits::kSuccess) {
      gate = notification_relay().add(token, NotificationRelay::Kind::kLog);
      if (gate == nullptr) result = Traits::kOutOfMemory;
    }
    out.put<int32_t>(static_cast<int32_t>(result));
    out.put<uint64_t>(result == Traits::kSuccess ? reinterpret_cast<uintptr_t>(gate) : 0);
    return result;
  }

  // Request u64 the handle; reply the status.
  static Status unregister_log(WireReader& in, WireWriter& out) {
    const auto handle = in.get<uint64_t>();
    in.expect_end();
    const Status result =
        notification_relay().remove(reinterpret_cast<const void*>(static_cast<uintptr_t>(handle)),
                                    NotificationRelay::Kind::kLog)
            ? Traits::kSuccess
            : Traits::kInvalidValue;
    out.put<int32_t>(static_cast<int32_t>(result));
    return result;
  }

  static Status dump_to_memory(WireReader& in, WireWriter& out) {
    const bool has_iterator = in.get<uint8_t>() != 0;
    unsigned iterator = in.get<uint32_t>();
    const auto capacity = in.get<uint64_t>();
    const auto flags = in.get<uint32_t>();
    in.expect_end();
    if (capacity == 0 || capacity > kMaxLogDumpBytes) {
      raise(ErrorKind::kInvalidInput, "a log dump of " + std::to_string(capacity) + " bytes");
    }
    std::vector<char> text(capacity, '\0');
    size_t size = capacity;
    const Status result =
        Traits::dump(has_iterator ? &iterator : nullptr, text.data(), &size, flags);
    if (result != Traits::kSuccess || size >= capacity) size = 0;  // never more than was given
    out.put<int32_t>(static_cast<int32_t>(result));
    out.put<uint32_t>(iterator);
    out.put_blob(text.data(), size);
    return result;
  }

  // Request i32 device, u64 the callback's token; reply the status, u64 the handle.
  static Status register_device(WireReader& in, WireWriter& out) {
    const auto device = in.get<int32_t>();
    const auto token = in.get<uint64_t>();
    in.expect_end();
    if (token == 0) raise(ErrorKind::kInvalidInput, "a device notification without a token");
    Gate* gate = notification_relay().add(token, NotificationRelay::Kind::kDevice);
    Status result = gate != nullptr ? Traits::kSuccess : Traits::kOutOfMemory;
    typename Traits::DeviceHandle handle{};
    if (result == Traits::kSuccess) {
      result = Traits::register_device(device, gate, &handle);
      if (result != Traits::kSuccess) {
        notification_relay().remove(gate, NotificationRelay::Kind::kDevice);
      }
    }
    if (result == Traits::kSuccess) {
      std::lock_guard lock(device_mutex());
      device_handles()[gate] = handle;
    }
    out.put<int32_t>(static_cast<int32_t>(result));
    out.put<uint64_t>(result == Traits::kSuccess ? reinterpret_cast<uintptr_t>(gate) : 0);
    return result;
  }

  // Request i32 device, u64 the handle; reply the status.
  static Status unregister_device(WireReader& in, WireWriter& out) {
    const auto device = in.get<int32_t>();
    const auto* gate = reinterpret_cast<const void*>(static_cast<uintptr_t>(in.get<uint64_t>()));
    in.expect_end();
    typename Traits::DeviceHandle handle{};
    Status result = Traits::kInvalidValue;
    {
      std::lock_guard lock(device_mutex());
      if (const auto it = device_handles().find(gate); it != device_handles().end()) {
        handle = it->second;
        result = Traits::kSuccess;
      }
    }
    if (result == Traits::kSuccess) result = Traits::unregister_device(device, handle);
    if (result == Traits::kSuccess) {
      notification_relay().remove(gate, NotificationRelay::Kind::kDevice);
      std::lock_guard lock(device_mutex());
      device_handles().erase(gate);
    }
    out.put<int32_t>(static_cast<int32_t>(result));
    return result;
  }

 private:
  // The plugin's own log callback, registered with the library once, at the first registration.
  static Status registered_with_library() {
    static std::mutex mutex;
    static bool registered = false;
    std::lock_guard lock(mutex);
    if (registered) return Traits::kSuccess;
    const Status result = Traits::register_log();
    registered = result == Traits::kSuccess;
    return result;
  }

  // Each device registration's library handle, by its gate (the handle the client holds).
  static std::mutex& device_mutex() {
    static std::mutex m;
    return m;
  }
  static std::unordered_map<const void*, typename Traits::DeviceHandle>& device_handles() {
    static std::unordered_map<const void*, typename Traits::DeviceHandle> handles;
    return handles;
  }
};

}  // namespace gvirtus::services

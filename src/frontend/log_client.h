// The stubs' half of a library's error log (the driver stub's cuLogs*, cuda rows 297-301; the
// runtime stub's cudaLogs*, cudart rows 306-310; the backend's half:
// backend/services/notification_relay.h; wire: src/common/log_dump_wire.h), written once for
// both. A registered callback runs on the session's callback thread, as a host function does:
// the backend relays each message of the library's log, the callback thread fetches it by its
// sequence (the library's "notification" row) and runs the application's callback with its level
// and text - after the call that logged it returned, where the library runs it during that call.
// A message fetched too late (the backend keeps the last 256) is not delivered. A dump to a file
// is a dump to memory that the stub writes at the caller's path.
//
// Traits, per library: Status, kSuccess, kInvalidValue; the rows kRegister, kUnregister, kDump,
// kNotification; call(row, encode, decode) (its remote_sync); token(callback, token) and
// drop(token) (its host callback registration); invoke(function, data, level, text, length) (the
// application's callback, by the library's type).
//
// A device's asynchronous notifications (DeviceNotificationClient) take the same way: a
// registration per call, each notification relayed to its own registration's callback. Traits:
// as above, with kRegister and kUnregister the device rows, and invoke(function, data, type,
// bytes over budget, handle).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/log_dump_wire.h"
#include "common/wire.h"
#include "frontend/frontend_abi.h"

namespace gvirtus::stub {

// The payload the backend relayed under `sequence` (the library's "notification" row); false when
// it is gone or cannot be had.
template <typename Traits>
bool fetch_payload(int32_t sequence, std::string& payload) {
  bool found = false;
  const auto result = Traits::call(
      Traits::kNotification,
      [&](WireWriter& w) { w.put<uint32_t>(static_cast<uint32_t>(sequence)); },
      [&](WireReader& r) {
        found = r.get<uint8_t>() != 0;
        if (found) payload = r.get_string(kMaxPayloadBytes);
      });
  return result == Traits::kSuccess && found;
}

// The registrations of one kind of callback (Tag): each sent as `row` with what `prefix` writes
// and the callback's token; the backend's handle for it is kept with the token, which a successful
// unregistration drops, and a failed registration drops at once. Never destroyed.
template <typename Traits, typename Tag>
class Registrations {
 public:
  using Status = typename Traits::Status;

  template <typename Row, typename Prefix>
  static Status add(Row row, const gvirtus_host_callback& callback, Prefix prefix,
                    uint64_t& handle) {
    uint64_t token = 0;
    if (const Status r = Traits::token(callback, token); r != Traits::kSuccess) return r;
    const Status result = Traits::call(
        row,
        [&](WireWriter& w) {
          prefix(w);
          w.put<uint64_t>(token);
        },
        [&](WireReader& r) { handle = r.get<uint64_t>(); });
    if (result != Traits::kSuccess) {
      Traits::drop(token);
      return result;
    }
    std::lock_guard lock(mutex());
    tokens()[handle] = token;
    return result;
  }

  template <typename Row, typename Prefix>
  static Status remove(Row row, Prefix prefix, uint64_t handle) {
    const Status result = Traits::call(
        row,
        [&](WireWriter& w) {
          prefix(w);
          w.put<uint64_t>(handle);
        },
        [](WireReader&) {});
    if (result != Traits::kSuccess) return result;
    std::lock_guard lock(mutex());
    if (const auto it = tokens().find(handle); it != tokens().end()) {
      Traits::drop(it->second);
      tokens().erase(it);
    }
    return result;
  }

 private:
  static std::mutex& mutex() {
    static auto& m = *new std::mutex;
    return m;
  }
  static std::unordered_map<uint64_t, uint64_t>& tokens() {
    static auto& t = *new std::unordered_map<uint64_t, uint64_t>;
    return t;
  }
};

template <typename Traits>
class LogClient {
 public:
  using Status = typename Traits::Status;

  static Status register_callback(void* function, void* data, uint64_t& handle) {
    if (function == nullptr) return Traits::kInvalidValue;
    return Listed::add(
        Traits::kRegister, {run_callback, function, data, nullptr}, [](WireWriter&) {}, handle);
  }

  static Status unregister_callback(uint64_t handle) {
    return Listed::remove(
        Traits::kUnregister, [](WireWriter&) {}, handle);
  }

  static Status dump_to_memory(unsigned* iterator, char* buffer, size_t* size, unsigned flags) {
    if (buffer == nullptr || size == nullptr || *size == 0) return Traits::kInvalidValue;
    std::string text;
    const Status result = dump(iterator, text, std::min<uint64_t>(*size, kMaxLogDumpBytes), flags);
    if (result != Traits::kSuccess) {
      *size = 0;
      return result;
    }
    std::memcpy(buffer, text.data(), text.size());
    buffer[text.size()] = '\0';
    *size = text.size();
    return result;
  }

  static Status dump_to_file(unsigned* iterator, const char* path, unsigned flags) {
    if (path == nullptr) return Traits::kInvalidValue;
    std::string text;
    const Status result = dump(iterator, text, kMaxLogDumpBytes, flags);
    if (result != Traits::kSuccess) return result;
    std::FILE* file = std::fopen(path, "w");
    if (file == nullptr) return Traits::kInvalidValue;
    const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
    return std::fclose(file) == 0 && written ? result : Traits::kInvalidValue;
  }

 private:
  // The callback thread's side: the message `sequence` names, handed to the application.
  static void run_callback(const gvirtus_host_callback* callback, int32_t sequence) {
    std::string payload;
    int32_t level = 0;
    std::string text;
    if (!fetch_payload<Traits>(sequence, payload) || !read_log_message(payload, level, text)) {
      return;
    }
    Traits::invoke(callback->function, callback->data, level, text.data(), text.size());
  }

  // One dump of at most `capacity` bytes, its NUL included: the text into `text`.
  static Status dump(unsigned* iterator, std::string& text, uint64_t capacity, unsigned flags) {
    uint32_t after = iterator != nullptr ? *iterator : 0;
    const Status result = Traits::call(
        Traits::kDump,
        [&](WireWriter& w) {
          w.put<uint8_t>(iterator != nullptr ? 1 : 0);
          w.put<uint32_t>(after);
          w.put<uint64_t>(capacity);
          w.put<uint32_t>(flags);
        },
        [&](WireReader& r) {
          after = r.get<uint32_t>();
          text = r.get_string(capacity - 1);
        });
    if (result == Traits::kSuccess && iterator != nullptr) *iterator = after;
    return result;
  }

  using Listed = Registrations<Traits, LogClient>;
};

// A device's asynchronous notifications: `register_callback` sends the device and the callback's
// token, and answers the backend's handle; each notification is fetched and handed to the
// application's callback with that handle.
template <typename Traits>
class DeviceNotificationClient {
 public:
  using Status = typename Traits::Status;

  static Status register_callback(int device, void* function, void* data, uint64_t& handle) {
    if (function == nullptr) return Traits::kInvalidValue;
    return Listed::add(
        Traits::kRegister, {run_callback, function, data, nullptr},
        [&](WireWriter& w) { w.put<int32_t>(device); }, handle);
  }

  static Status unregister_callback(int device, uint64_t handle) {
    return Listed::remove(
        Traits::kUnregister, [&](WireWriter& w) { w.put<int32_t>(device); }, handle);
  }

 private:
  static void run_callback(const gvirtus_host_callback* callback, int32_t sequence) {
    std::string payload;
    DeviceNotification notification{};
    if (!fetch_payload<Traits>(sequence, payload) ||
        !read_device_notification(payload, notification)) {
      return;
    }
    Traits::invoke(callback->function, callback->data, notification.type,
                   notification.bytes_over_budget, notification.handle);
  }

  using Listed = Registrations<Traits, DeviceNotificationClient>;
};

}  // namespace gvirtus::stub

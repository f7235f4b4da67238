// The library's error log on the wire, for both stubs and both plugins (cuda row 300,
// cuLogsDumpToMemory; cudart row 309, cudaLogsDumpToMemory; a dump to a file is one to memory the
// stub writes out): request u8 whether an iterator is given, u32 its value, u64 the buffer's
// capacity (at most kMaxLogDumpBytes, its terminating NUL included), u32 flags; reply i32, u32 the
// iterator after the dump, then a blob: the text, without its NUL (empty after a failure).
// A relayed message (the "notification" rows' payload) is i32 its level, then its text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace gvirtus {

// The driver keeps at most 25600 bytes of messages; one more for the NUL.
inline constexpr uint64_t kMaxLogDumpBytes = 25600 + 1;
// A relayed notification's payload at most (services/notification_relay.h's kMaxPayload).
inline constexpr size_t kMaxPayloadBytes = 8192;

inline std::string log_message_payload(int32_t level, const char* text, size_t length) {
  std::string payload(sizeof level, '\0');
  std::memcpy(payload.data(), &level, sizeof level);
  if (text != nullptr) payload.append(text, length);
  return payload;
}

// A payload's level and text; false for one too short to be a message.
inline bool read_log_message(const std::string& payload, int32_t& level, std::string& text) {
  if (payload.size() < sizeof level) return false;
  std::memcpy(&level, payload.data(), sizeof level);
  text = payload.substr(sizeof level);
  return true;
}

// A device's asynchronous notification (cuDeviceRegisterAsyncNotification's, cuda rows 302-303;
// cudaDeviceRegisterAsyncNotification's, cudart rows 311-312), relayed as its payload: the
// notification's type, the bytes over the device's memory budget (its one kind so far), and the
// registration's handle, which the application's callback receives.
struct DeviceNotification {
  int32_t type;
  uint64_t bytes_over_budget;
  uint64_t handle;
};

inline std::string device_notification_payload(const DeviceNotification& notification) {
  std::string payload(sizeof notification, '\0');
  std::memcpy(payload.data(), &notification, sizeof notification);
  return payload;
}

inline bool read_device_notification(const std::string& payload, DeviceNotification& out) {
  if (payload.size() != sizeof out) return false;
  std::memcpy(&out, payload.data(), sizeof out);
  return true;
}

}  // namespace gvirtus

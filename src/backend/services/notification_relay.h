// Notifications a library sends the application from a thread of its own - error log messages
// (cuLogsRegisterCallback, cudaLogsRegisterCallback) and a device's asynchronous notifications
// (cuDeviceRegisterAsyncNotification, cudaDeviceRegisterAsyncNotification) - relayed to the
// application's callbacks (a shared backend service of the cuda and cudart plugins; the client's
// half is frontend/log_client.h and the stubs' async_notifications.cpp).
//
// For the log, the plugin registers one callback of its own with the library, at the session's
// first registration, which hands each message to deliver(); for a device's notifications, one
// per registration, which hands each to deliver_to() its own. Each registration of the client is a
// gate kept for its callback's token (host_gates.h) that nothing waits on: a message is kept under
// a sequence number, and every registration's gate is notified with that number as its status. The
// client's callback thread then fetches the message by its number (the plugin's "notification" row:
// serve_notification) and runs the application's callback with it. So the application's callback
// runs on the client, after the call that logged returned, in the order the messages came; the
// library never waits for it.
//
// At most kKept messages are kept (the oldest go first: a client that fetches one too late gets
// none, and its callback is not run), each of at most kMaxPayload bytes.
//
// Thread affinity: any thread; one instance per plugin, one session per worker process.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/services/host_gates.h"
#include "common/log_dump_wire.h"
#include "common/wire.h"

namespace gvirtus::services {

class NotificationRelay {
 public:
  static constexpr size_t kKept = 256;
  static constexpr size_t kMaxPayload = kMaxPayloadBytes;
  static constexpr size_t kMaxRegistrations = 64;

  enum class Kind { kLog, kDevice };

  // A registration for the client's callback `token`: the gate that names it, which is its
  // handle too. Null when kMaxRegistrations are registered or no gate can be had.
  Gate* add(uint64_t token, Kind kind);
  // Forgets the registration `handle` of `kind`; false when it is none of this relay's.
  bool remove(const void* handle, Kind kind);
  // Whether any registration is left.
  bool registered() const;

  // Keeps `payload` (cut to kMaxPayload) under a new sequence number and notifies every log
  // registration with it.
  void deliver(std::string payload);
  // The same for the one registration `to`, if it is still registered.
  void deliver_to(const Gate* to, std::string payload);
  // The payload kept under `sequence`, if it still is.
  std::optional<std::string> payload(uint32_t sequence) const;

 private:
  void keep_and_notify(std::string payload, const Gate* only);

  mutable std::mutex mutex_;
  std::vector<std::pair<Gate*, Kind>> registrations_;
  std::deque<std::pair<uint32_t, std::string>> kept_;
  uint32_t next_ = 1;
};

// The plugin's relay.
NotificationRelay& notification_relay();

// Serves a plugin's "notification" row on `relay`: request u32 the sequence; reply i32 0, u8
// found, then when found a blob, the payload.
void serve_notification(NotificationRelay& relay, WireReader& in, WireWriter& out);

}  // namespace gvirtus::services

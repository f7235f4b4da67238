#include "backend/services/notification_relay.h"

#include <algorithm>

namespace gvirtus::services {

Gate* NotificationRelay::add(uint64_t token, Kind kind) {
  std::lock_guard lock(mutex_);
  if (registrations_.size() >= kMaxRegistrations) return nullptr;
  Gate* gate = host_gates().make(token, false);  // kept: notified any number of times
  if (gate != nullptr) registrations_.emplace_back(gate, kind);
  return gate;
}

bool NotificationRelay::remove(const void* handle, Kind kind) {
  std::lock_guard lock(mutex_);
  const auto it = std::find_if(registrations_.begin(), registrations_.end(), [&](const auto& r) {
    return r.first == handle && r.second == kind;
  });
  if (it == registrations_.end()) return false;
  registrations_.erase(it);  // its gate lives on with the session's, notified no more
  return true;
}

bool NotificationRelay::registered() const {
  std::lock_guard lock(mutex_);
  return !registrations_.empty();
}

void NotificationRelay::deliver(std::string payload) {
  keep_and_notify(std::move(payload), nullptr);
}

void NotificationRelay::deliver_to(const Gate* to, std::string payload) {
  if (to != nullptr) keep_and_notify(std::move(payload), to);
}

void NotificationRelay::keep_and_notify(std::string payload, const Gate* only) {
  std::vector<Gate*> notified;
  uint32_t sequence = 0;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [gate, kind] : registrations_) {
      if (only != nullptr ? gate == only : kind == Kind::kLog) notified.push_back(gate);
    }
    if (notified.empty()) return;
    if (payload.size() > kMaxPayload) payload.resize(kMaxPayload);
    sequence = next_++;
    if (next_ > uint32_t{0x7fffffff}) next_ = 1;  // travels as a positive status
    kept_.emplace_back(sequence, std::move(payload));
    if (kept_.size() > kKept) kept_.pop_front();
  }
  for (Gate* gate : notified) HostGates::notify(gate, static_cast<int32_t>(sequence));
}

std::optional<std::string> NotificationRelay::payload(uint32_t sequence) const {
  std::lock_guard lock(mutex_);
  for (const auto& [kept, text] : kept_) {
    if (kept == sequence) return text;
  }
  return std::nullopt;
}

NotificationRelay& notification_relay() {
  static auto& relay = *new NotificationRelay;  // the library may call back at exit
  return relay;
}

void serve_notification(NotificationRelay& relay, WireReader& in, WireWriter& out) {
  const auto sequence = in.get<uint32_t>();
  in.expect_end();
  const std::optional<std::string> payload = relay.payload(sequence);
  out.put<int32_t>(0);
  out.put<uint8_t>(payload ? 1 : 0);
  if (payload) out.put_blob(payload->data(), payload->size());
}

}  // namespace gvirtus::services

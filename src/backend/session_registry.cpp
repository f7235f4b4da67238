#include "backend/session_registry.h"

namespace gvirtus {
namespace {

SessionRegistry& registry(void* self) {
  return *static_cast<SessionRegistry*>(self);
}

}  // namespace

SessionRegistry::SessionRegistry()
    : table_{sizeof(gvirtus_session_registry_v1),
             this,
             [](void* self, const gvirtus_session_peer_v1* peer) { registry(self).join(peer); },
             [](void* self, const gvirtus_session_peer_v1* asking, const char* kind,
                const void* handle) { return registry(self).holds(asking, kind, handle) ? 1 : 0; },
             [](void* self, const gvirtus_session_peer_v1* asking, const void* address,
                uint64_t bytes) { return registry(self).contains(asking, address, bytes) ? 1 : 0; },
             [](void* self, const gvirtus_session_peer_v1* asking, const char* kind,
                const void* handle) { registry(self).forget(asking, kind, handle); },
             [](void* self, const gvirtus_session_peer_v1* asking, int device) {
               registry(self).device_reset(asking, device);
             }} {}

void SessionRegistry::join(const gvirtus_session_peer_v1* peer) {
  if (peer == nullptr) return;
  std::lock_guard lock(mutex_);
  for (const auto& known : peers_) {
    if (known.self == peer->self) return;  // a plugin opened again in the same session
  }
  peers_.push_back(*peer);
}

std::vector<gvirtus_session_peer_v1> SessionRegistry::others(
    const gvirtus_session_peer_v1* asking) {
  std::lock_guard lock(mutex_);
  std::vector<gvirtus_session_peer_v1> out;
  for (const auto& peer : peers_) {
    if (asking == nullptr || peer.self != asking->self) out.push_back(peer);
  }
  return out;
}

bool SessionRegistry::holds(const gvirtus_session_peer_v1* asking, const char* kind,
                            const void* handle) {
  if (kind == nullptr) return false;
  for (const auto& peer : others(asking)) {
    if (peer.holds != nullptr && peer.holds(peer.self, kind, handle) != 0) return true;
  }
  return false;
}

bool SessionRegistry::contains(const gvirtus_session_peer_v1* asking, const void* address,
                               uint64_t bytes) {
  for (const auto& peer : others(asking)) {
    if (peer.contains != nullptr && peer.contains(peer.self, address, bytes) != 0) return true;
  }
  return false;
}

void SessionRegistry::forget(const gvirtus_session_peer_v1* asking, const char* kind,
                             const void* handle) {
  if (kind == nullptr) return;
  for (const auto& peer : others(asking)) {
    if (peer.forget != nullptr) peer.forget(peer.self, kind, handle);
  }
}

void SessionRegistry::device_reset(const gvirtus_session_peer_v1* asking, int device) {
  for (const auto& peer : others(asking)) {
    if (peer.device_reset != nullptr) peer.device_reset(peer.self, device);
  }
}

}  // namespace gvirtus

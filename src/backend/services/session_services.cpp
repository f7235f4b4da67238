#include "backend/services/session_services.h"

#include <cstring>

namespace gvirtus::services {
namespace {

SessionServices& of(void* self) {
  return *static_cast<SessionServices*>(self);
}

}  // namespace

void SessionServices::reset(std::atomic<uint64_t>* device_bytes,
                            const gvirtus_session_registry_v1* registry,
                            std::span<const char* const> kind_names,
                            void (*on_device_reset)(int device)) {
  handles.clear();
  allocations.reset(device_bytes);
  kind_names_ = kind_names;
  on_device_reset_ = on_device_reset;
  // A registry from a backend whose table lacks a function this one calls is not used.
  registry_ = registry != nullptr && registry->struct_size >= sizeof(gvirtus_session_registry_v1) &&
                      registry->join != nullptr
                  ? registry
                  : nullptr;
  if (registry_ == nullptr) return;
  peer_.self = this;
  peer_.holds = [](void* self, const char* kind, const void* handle) {
    return of(self).holds_named(kind, handle) ? 1 : 0;
  };
  peer_.contains = [](void* self, const void* address, uint64_t bytes) {
    return of(self).allocations.contains(address, bytes) ? 1 : 0;
  };
  peer_.forget = [](void* self, const char* kind, const void* handle) {
    of(self).forget_named(kind, handle);
  };
  peer_.device_reset = [](void* self, int device) {
    if (of(self).on_device_reset_ != nullptr) of(self).on_device_reset_(device);
  };
  registry_->join(registry_->self, &peer_);
}

int SessionServices::kind_named(const char* kind) const {
  if (kind == nullptr) return -1;
  for (size_t i = 0; i < kind_names_.size(); ++i) {
    if (kind_names_[i] != nullptr && std::strcmp(kind_names_[i], kind) == 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool SessionServices::holds_named(const char* kind, const void* handle) const {
  const int index = kind_named(kind);
  return index >= 0 && handles.holds(static_cast<uint16_t>(index), handle);
}

void SessionServices::forget_named(const char* kind, const void* handle) {
  const int index = kind_named(kind);
  if (index >= 0) handles.release(static_cast<uint16_t>(index), handle);
}

bool SessionServices::peer_holds(const char* kind, const void* handle) const {
  return registry_ != nullptr && registry_->holds != nullptr &&
         registry_->holds(registry_->self, &peer_, kind, handle) != 0;
}

bool SessionServices::peer_contains(const void* address, uint64_t bytes) const {
  return registry_ != nullptr && registry_->contains != nullptr &&
         registry_->contains(registry_->self, &peer_, address, bytes) != 0;
}

void SessionServices::peer_forget(const char* kind, const void* handle) const {
  if (registry_ != nullptr && registry_->forget != nullptr) {
    registry_->forget(registry_->self, &peer_, kind, handle);
  }
}

void SessionServices::peer_device_reset(int device) const {
  if (registry_ != nullptr && registry_->device_reset != nullptr) {
    registry_->device_reset(registry_->self, &peer_, device);
  }
}

SessionServices& session_services() {
  static SessionServices services;
  return services;
}

}  // namespace gvirtus::services

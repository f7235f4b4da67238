// The shared backend services of one plugin in one session: its handle table and its allocation
// ledger (handle_table.h, allocation_ledger.h), and its place in the session's registry.
//
// One session runs per worker process, and this library is linked into each plugin with hidden
// visibility, so session_services() is one instance per plugin per session. A plugin resets it
// when its session opens, joining the session's registry (backend/plugin_abi.h): what one plugin
// does not hold itself it asks the others about (peer_holds, peer_contains), so that a stream the
// runtime plugin created is the driver plugin's to use too, and a device range either allocated
// is valid on both paths. A handle one plugin destroys that another created is forgotten by its
// creator (peer_forget).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "backend/plugin_abi.h"
#include "backend/services/allocation_ledger.h"
#include "backend/services/handle_table.h"

namespace gvirtus::services {

struct SessionServices {
  HandleTable handles;
  AllocationLedger allocations;

  // A new session: empty tables; the ledger publishes into `device_bytes` (may be null). With a
  // registry, the plugin joins it; `kind_names` names its handle kinds by index (the
  // descriptor's names), which is how the plugins of a session speak of them.
  // `on_device_reset` is what it forgets when another plugin of the session resets a device.
  void reset(std::atomic<uint64_t>* device_bytes,
             const gvirtus_session_registry_v1* registry = nullptr,
             std::span<const char* const> kind_names = {},
             void (*on_device_reset)(int device) = nullptr);

  // Whether another plugin of the session holds `handle` as a kind named `kind`.
  bool peer_holds(const char* kind, const void* handle) const;
  // Whether [address, address + bytes) lies in memory another plugin of the session allocated.
  bool peer_contains(const void* address, uint64_t bytes) const;
  // Tells the other plugins that `handle` (a kind named `kind`) was destroyed through this one.
  void peer_forget(const char* kind, const void* handle) const;
  // Tells the other plugins that `device` was reset through this one.
  void peer_device_reset(int device) const;

 private:
  // This plugin's answers to the others (the peer it joined with).
  bool holds_named(const char* kind, const void* handle) const;
  void forget_named(const char* kind, const void* handle);
  int kind_named(const char* kind) const;  // -1 when this plugin has no such kind

  const gvirtus_session_registry_v1* registry_ = nullptr;
  std::span<const char* const> kind_names_;
  void (*on_device_reset_)(int device) = nullptr;
  gvirtus_session_peer_v1 peer_{};
};

SessionServices& session_services();

}  // namespace gvirtus::services

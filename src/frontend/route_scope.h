// A call's route in a client's pool (frontend/pool.h, gvirtus_route_set in frontend_abi.h): a
// stub routes a call about a device, handle or address of one backend to that backend for the
// length of the call, and the thread's route is what it was again afterwards - the backend of the
// thread's current context, which calls about nothing in particular go to.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "common/log.h"
#include "frontend/frontend_abi.h"

namespace gvirtus::stub {

class RouteScope {
 public:
  // Routes to `backend` until destroyed; nullopt (nothing known about the call) changes nothing.
  explicit RouteScope(std::optional<uint32_t> backend) {
    if (!backend) return;
    previous_ = gvirtus_route_get();
    if (*backend != previous_ && gvirtus_route_set(*backend) == GVIRTUS_OK) active_ = true;
  }
  ~RouteScope() {
    if (active_) gvirtus_route_set(previous_);
  }
  RouteScope(const RouteScope&) = delete;
  RouteScope& operator=(const RouteScope&) = delete;

 private:
  uint32_t previous_ = 0;
  bool active_ = false;
};

// The first backend known among a call's keys, in the order of its parameters.
inline std::optional<uint32_t> first_known(std::initializer_list<std::optional<uint32_t>> keys) {
  for (const auto& key : keys) {
    if (key) return key;
  }
  return std::nullopt;
}

// Whether the process's configuration names more than one backend. Asked once, as every call of a
// stub asks it: the configuration does not change while the process runs (a forked child reads
// the same file).
inline bool pooled_process() {
  static const bool many = gvirtus_pool_size() > 1;
  return many;
}

// The route of a library whose calls are not routed by what they name (no pool_routing): in a
// pool they keep to the first backend, whose handles they hold, whatever route the thread's driver
// calls took; nothing changes with one backend. Logged once per `said` flag, with `why`.
inline std::optional<uint32_t> pinned_to_first_backend(std::atomic<bool>& said, const char* library,
                                                       const char* why) {
  if (!pooled_process()) return std::nullopt;
  if (!said.exchange(true)) {
    GVIRTUS_LOG(kWarning) << library
                          << " (a gvirtus stub) serves the first backend of the pool only"
                          << (why[0] != '\0' ? "; " : "") << why;
  }
  return 0;
}

}  // namespace gvirtus::stub

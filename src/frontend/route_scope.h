// A call's route in a client's pool (frontend/pool.h, gvirtus_route_set in frontend_abi.h): a
// stub routes a call about a device, handle or address of one backend to that backend for the
// length of the call, and the thread's route is what it was again afterwards - the backend of the
// thread's current context, which calls about nothing in particular go to.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

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

}  // namespace gvirtus::stub

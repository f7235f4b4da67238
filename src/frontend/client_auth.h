// The client's side of session authentication (protocol/auth.h describes the exchange).
//
// Called by Client while it connects, right after the hello reply: answers the backend's
// challenge once the backend has proven that it holds the same secret, or decides whether a
// backend that does not authenticate itself is acceptable. Throws Error{kInvalidInput} with a
// message naming the backend and the reason when the session must not go on.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>

#include "common/config.h"
#include "communicators/communicator.h"
#include "protocol/auth.h"
#include "protocol/handshake.h"

namespace gvirtus {

void authenticate_backend(Connection& connection, const Config& config,
                          const std::optional<Secret>& secret, const HelloReply& reply,
                          std::span<const std::byte> hello_payload, uint32_t thread_id,
                          std::chrono::milliseconds timeout);

}  // namespace gvirtus

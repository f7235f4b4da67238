// Core calls as the backend tests make them.
#pragma once

#include <functional>
#include <string>

#include "common/error.h"
#include "frontend/client.h"
#include "protocol/status.h"
#include "support/backend_process.h"

namespace gvirtus::testing {

// One core Ping through `client`; true when the echo matches. Throws what the call throws.
bool ping(Client& client, const std::string& text = "ping");

// The backend's Status (core kStatus), through a client of its own.
BackendStatus status_of(const BackendProcess& backend);

// Why the backend refuses a session that opens `plugin` in its hello: the error's message, or
// empty when the session opens.
std::string hello_refusal(const BackendProcess& backend, const PluginIdentity& plugin);

// The kind of the gvirtus error `f` throws, or ErrorKind{0} when it returns.
ErrorKind error_of(const std::function<void()>& f);

}  // namespace gvirtus::testing

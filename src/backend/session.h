// One client session, run inside its own worker process.
//
// The session reads frames from its connection, checks the handshake, dispatches each call to its
// plugin and sends replies. A malformed frame, a failed handshake or a dead peer ends the session
// with a logged reason; the worker process then exits and the kernel and CUDA free everything it
// held. Nothing here can affect another session.
#pragma once

#include <memory>
#include <optional>

#include "backend/output_relay.h"
#include "backend/plugin_registry.h"
#include "common/config.h"
#include "communicators/communicator.h"
#include "protocol/auth.h"

namespace gvirtus {

// The handshake must complete within this bound, so an idle connection cannot hold a worker.
inline constexpr std::chrono::milliseconds kHandshakeTimeout{10000};

// Serves the client on `connection` until it leaves or misbehaves. Never throws; returns the
// process exit status for the worker (0 when the client left normally). With a `secret`, the
// client must authenticate (protocol/auth.h) before any call is served; the session owns the
// secret and wipes it as soon as the client is authenticated, so that nothing the client runs
// afterwards (kernels can reach a worker's memory on systems with HMM) can find it.
// `module_cache` is the cache settled when the daemon started (backend/module_cache_place.h).
// With an `output_relay` (the worker's, backend/output_relay.h), what the process printed is sent
// to the client ahead of every synchronous reply of a plugin call.
int run_session(Connection& connection, const PluginRegistry& plugins, const Limits& limits,
                std::optional<Secret> secret = std::nullopt,
                const ModuleCacheConfig& module_cache = {}, OutputRelay* output_relay = nullptr);

}  // namespace gvirtus

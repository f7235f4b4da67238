// Host callbacks: the client's half of host functions that run in the application while the
// backend's stream waits for them (the backend's half: backend/services/host_gates.h).
//
// A stub registers the application's function (a host function, a stream callback, a graph host
// node's function) and gets a token, which it sends in the function's place. The backend
// enqueues a gate for that token; when the library reaches it, the gate waits. The session's
// callback thread - one per plugin and backend, started by serve() - waits in a plugin call
// ("next": the plugin's own row) for reached gates, runs each one's callback in order, and names
// the run it finished in its next call, which releases the gate and so the stream. The
// application's thread never waits for its host function: it returns from the enqueue at once.
//
// Tokens are the process's, unique across plugins and backends; the callback of a gate made for
// one run is forgotten after that run, any other's (graph host nodes, captured host functions)
// lives until the process ends or forks. A forked child starts with no tokens and no threads.
//
// serve() first asks the backend to serve every client thread on an executor (core
// ServeOnExecutors): a blocked call of the thread the backend otherwise serves on its reading
// thread (a stream synchronisation waiting for a gate) would stop it reading the callback
// thread's release.
//
// Thread affinity: any thread. The callback threads are never joined: they end when their session
// fails or the process exits.
#pragma once

#include <cstdint>
#include <optional>

#include "frontend/frontend_abi.h"

namespace gvirtus {

// Registers `callback` (copied); returns its token, never 0.
uint64_t add_host_callback(const gvirtus_host_callback& callback);
// The callback of `token`, if it is still registered.
std::optional<gvirtus_host_callback> find_host_callback(uint64_t token);
// Forgets `token` (its enqueue failed: no gate will ever name it).
void drop_host_callback(uint64_t token);

// Makes sure the calling thread's route's backend session serves the gates of the plugin whose
// "next" call is `next_call_id`: the first time, switches the session to executors and starts
// the callback thread. Throws Error when the session cannot (it failed, or refused).
void serve_host_callbacks(uint32_t next_call_id);

}  // namespace gvirtus

#include "frontend/host_callbacks.h"

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "common/error.h"
#include "common/log.h"
#include "common/wire.h"
#include "frontend/pool.h"
#include "protocol/core_calls.h"

namespace gvirtus {
namespace {

// How long one "next" call waits on the backend before the callback thread asks again. Below
// the backend's bound (HostGates::kMaxWait) and, when the configuration bounds replies, below
// that bound.
constexpr uint32_t kNextWaitMs = 10000;

struct Registry {
  std::mutex mutex;  // guards the fields below
  std::unordered_map<uint64_t, gvirtus_host_callback> callbacks;
  uint64_t next_token = 1;
  std::set<uint32_t> executor_routes;              // sessions switched to executors
  std::set<std::pair<uint32_t, uint32_t>> served;  // (next call, route) with a thread
};

// Never destroyed: callback threads and exit handlers may still use it. A forked child gets a
// fresh one (leaking its parent's, whose mutex a thread that is gone may hold): it has its own
// sessions and no callback threads, and its parent's tokens name its parent's gates.
Registry* g_registry = nullptr;

Registry& registry() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_registry = new Registry;
    ::pthread_atfork(nullptr, nullptr, [] { g_registry = new Registry; });
  });
  return *g_registry;
}

struct Reached {
  uint64_t run = 0;
  uint64_t token = 0;
  int32_t status = 0;
  bool once = false;
};

// One "next" call: releases `done`, waits for a reached gate.
std::optional<Reached> next_gate(Client& client, uint32_t next_call_id, uint64_t done,
                                 uint32_t wait_ms) {
  WireWriter request;
  request.put<uint64_t>(done);
  request.put<uint32_t>(wait_ms);
  const ByteView payload[] = {request.view()};
  std::optional<Reached> reached;
  client.call(next_call_id, payload, [&](WireReader& in) {
    in.get<int32_t>();  // the plugin's status: a stray earlier failure of this thread at most
    if (in.get<uint8_t>() == 0) return;
    Reached r;
    r.run = in.get<uint64_t>();
    r.token = in.get<uint64_t>();
    r.status = in.get<int32_t>();
    r.once = in.get<uint8_t>() != 0;
    in.expect_end();
    reached = r;
  });
  return reached;
}

// The callback thread of one plugin's gates on one backend: runs each reached gate's callback,
// then releases it with the next call. Ends when the session does.
void serve_gates(uint32_t next_call_id, uint32_t route) {
  ::pthread_setname_np(::pthread_self(), "gvirtus-hostfn");
  Client& client = Pool::instance().member(route);
  // This thread releases gates that calls of other threads may wait for in the library: its own
  // calls must not wait for those (core ServesTheClient).
  try {
    client.call(core::call_id(core::Fn::kServesTheClient), {},
                [](WireReader& in) { in.expect_end(); });
  } catch (const Error& e) {
    // A backend older than the call serves the gates all the same, only in arrival order.
    if (e.kind() != ErrorKind::kUnimplemented) {
      GVIRTUS_LOG(kDebug) << "the host function thread ends: " << e.what();
      return;
    }
  }
  const uint32_t bound = client.reply_timeout_ms();
  const uint32_t wait_ms = bound > 0 ? std::min(kNextWaitMs, std::max(bound / 2, 1u)) : kNextWaitMs;
  uint64_t done = 0;
  for (;;) {
    std::optional<Reached> reached;
    try {
      reached = next_gate(client, next_call_id, done, wait_ms);
    } catch (const Error& e) {
      // The session is over (or refused the call): its gates returned with it.
      GVIRTUS_LOG(kDebug) << "the host function thread ends: " << e.what();
      return;
    }
    done = 0;
    if (!reached) continue;
    std::optional<gvirtus_host_callback> callback;
    {
      Registry& r = registry();
      std::lock_guard lock(r.mutex);
      if (const auto found = r.callbacks.find(reached->token); found != r.callbacks.end()) {
        callback = found->second;
        if (reached->once) r.callbacks.erase(found);
      }
    }
    if (callback) {
      try {
        callback->run(&*callback, reached->status);
      } catch (...) {
        GVIRTUS_LOG(kError) << "a host function threw; the stream goes on";  // stubs' run never
      }
    } else {
      GVIRTUS_LOG(kWarning) << "the backend reached a host function this process does not know"
                            << " (token " << reached->token << "); it is skipped";
    }
    done = reached->run;
  }
}

}  // namespace

uint64_t add_host_callback(const gvirtus_host_callback& callback) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const uint64_t token = r.next_token++;
  r.callbacks.emplace(token, callback);
  return token;
}

std::optional<gvirtus_host_callback> find_host_callback(uint64_t token) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const auto found = r.callbacks.find(token);
  if (found == r.callbacks.end()) return std::nullopt;
  return found->second;
}

void drop_host_callback(uint64_t token) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.callbacks.erase(token);
}

void serve_host_callbacks(uint32_t next_call_id) {
  const uint32_t route = Pool::route();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);  // held across the switch: one thread starts each at once
  if (r.served.contains({next_call_id, route})) return;
  if (!r.executor_routes.contains(route)) {
    Pool::instance().member(route).call(core::call_id(core::Fn::kServeOnExecutors), {},
                                        [](WireReader& in) { in.expect_end(); });
    r.executor_routes.insert(route);
  }
  std::thread(serve_gates, next_call_id, route).detach();
  r.served.insert({next_call_id, route});
}

}  // namespace gvirtus

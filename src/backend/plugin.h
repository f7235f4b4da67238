// The backend side of a plugin: executes the calls of one call table for one client session.
//
// A plugin is either built in (core) or a shared library libgvirtus-plugin-<name>.so in the
// backend's plugin directory, named by the operator in properties.json ("plugins": ["cudart"]),
// never by a client. A library exports only the C ABI of backend/plugin_abi.h; one written in C++
// implements the classes below and exports them with backend/plugin_export.h, and the daemon
// sees it through the same classes again (backend/abi_plugin.h). No C++ object or exception
// crosses between the daemon and a library.
//
// Process model: plugins are loaded in the daemon (so a missing one fails at startup), but
// open_session() and every handle() run in the session's worker process, after fork(). That is
// where a plugin may initialise CUDA; the daemon itself never does.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "backend/plugin_abi.h"
#include "common/frame.h"
#include "common/wire.h"
#include "protocol/call_table.h"

namespace gvirtus {

struct SessionInfo {
  std::string peer;       // "tcp://127.0.0.1:40112"
  std::string transport;  // "tcp"
  std::string program;    // the client's program name, from the handshake
  uint32_t client_pid = 0;
  // Memory the client maps too (Connection::shared_memory()), empty over transports that share
  // none. Valid for the session's life; its contents are the client's, hostile like any input.
  std::span<std::byte> shared_memory;
  // Where a plugin keeps the device memory it has allocated for this session, in bytes, for
  // status queries (gvirtus-smi); null when nothing reads it. Shared with other processes: only
  // atomic stores.
  std::atomic<uint64_t>* device_bytes = nullptr;
  // The session's registry of its plugins (backend/plugin_abi.h), through which a plugin asks the
  // others about handles and device memory it does not hold itself; null when none.
  const gvirtus_session_registry_v1* registry = nullptr;
  // The backend's module cache that sessions share (backend/services/module_cache.h): its
  // directory, settled when the daemon started (backend/module_cache_place.h), and the bound on
  // its size; an empty directory or a bound of 0: there is none.
  std::string module_cache_dir;
  uint64_t module_cache_max_bytes = 0;
  // Non-zero once the client is gone (its connection closed, the session ending): a call that
  // waits for the client (a host function's gate, services/host_gates.h) stops waiting. Null
  // when nothing says so.
  const std::atomic<int>* client_gone = nullptr;
};

// One call being executed. `args` reads the request payload; `reply` collects the reply payload
// (ignored for asynchronous calls).
struct Call {
  const FrameHeader& header;
  WireReader args;
  WireWriter& reply;
  // Set instead of writing `reply` when the reply lies in memory of the plugin's own (a plugin
  // behind the C ABI: backend/abi_plugin.h), valid until the call's thread calls again.
  std::optional<std::span<const std::byte>> reply_bytes{};
};

class PluginSession {
 public:
  virtual ~PluginSession() = default;

  // Executes one call, on the worker's thread for the calling client thread (each client thread
  // has one; so calls of different client threads may run concurrently, and a plugin session must
  // be thread-safe). Throws Error:
  // kInvalidInput means the request was malformed and ends the session; any other kind is sent
  // back as an error reply (for an asynchronous call, as a deferred error frame).
  virtual void handle(Call& call) = 0;
};

class BackendPlugin {
 public:
  virtual ~BackendPlugin() = default;
  virtual PluginIdentity identity() const = 0;
  // Whether the calls of a function (the low 16 bits of their call ids) print nothing themselves:
  // queries of what the library holds on the host, which neither synchronise, copy, launch nor
  // load a module (where the CUDA driver flushes the device's printf). Before their replies the
  // session relays only the output its worker had already taken (backend/output_relay.h),
  // without a system call; before any other synchronous reply it relays everything printed.
  virtual bool quiet(uint16_t function) const {
    static_cast<void>(function);
    return false;
  }
  // Starts this plugin's state for a new session (in the worker process).
  virtual std::unique_ptr<PluginSession> open_session(const SessionInfo& session) = 0;
};

}  // namespace gvirtus

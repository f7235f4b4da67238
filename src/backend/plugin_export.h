// For plugin libraries written in C++: exports a BackendPlugin class through the C ABI of
// backend/plugin_abi.h. In the plugin's one source file that defines its plugin class:
//
//   GVIRTUS_EXPORT_BACKEND_PLUGIN(gvirtus::cudart::CudartPlugin)
//
// defines gvirtus_backend_plugin_v1 (exported), built from one static instance of the class,
// and gvirtus_backend_plugin_object() (hidden: for code linked into the same binary, such as a
// fuzzer) returning that instance. Every exception a session throws is caught on the plugin's
// side and becomes an error kind and message; the reply is the plugin's own buffer, per thread,
// handed to the backend without a copy.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <string>

#include "backend/plugin.h"
#include "backend/plugin_abi.h"
#include "common/error.h"

namespace gvirtus::plugin_export {

// The C ABI's functions over one BackendPlugin object.
template <typename Plugin>
struct Adapter {
  static Plugin& plugin() {
    static Plugin instance;
    return instance;
  }

  // The buffers a result points into: per thread, valid until the thread's next call.
  struct ThreadBuffers {
    WireWriter reply;
    std::string message;
  };
  static ThreadBuffers& buffers() {
    thread_local ThreadBuffers b;
    return b;
  }

  static void set_error(gvirtus_result_v1* result, ErrorKind kind, const char* message) {
    ThreadBuffers& b = buffers();
    try {
      b.message = message;
    } catch (...) {
      b.message.clear();
    }
    result->reply = nullptr;
    result->reply_size = 0;
    result->error_kind = static_cast<uint32_t>(kind);
    result->error_message = b.message.c_str();
  }

  // Runs `body`, turning what it throws into the result's error.
  template <typename Body>
  static bool guarded(gvirtus_result_v1* result, Body&& body) noexcept {
    try {
      body();
      return true;
    } catch (const Error& e) {
      set_error(result, e.kind(), e.what());
    } catch (const std::exception& e) {
      set_error(result, ErrorKind::kFailed, (std::string("internal error: ") + e.what()).c_str());
    } catch (...) {
      set_error(result, ErrorKind::kFailed, "internal error");
    }
    return false;
  }

  // A session's state: the C++ session and the strings its SessionInfo views.
  struct State {
    SessionInfo info;
    std::unique_ptr<PluginSession> session;
  };

  static void* open_session(const gvirtus_session_info_v1* c, gvirtus_result_v1* result) noexcept {
    State* opened = nullptr;
    guarded(result, [&] {
      auto state = std::make_unique<State>();
      state->info.peer = c->peer != nullptr ? c->peer : "";
      state->info.transport = c->transport != nullptr ? c->transport : "";
      state->info.program = c->program != nullptr ? c->program : "";
      state->info.client_pid = c->client_pid;
      state->info.shared_memory = {static_cast<std::byte*>(c->shared_memory),
                                   c->shared_memory_size};
      // The same lock-free 64-bit word: the ABI passes it as plain memory.
      state->info.device_bytes = reinterpret_cast<std::atomic<uint64_t>*>(c->device_bytes);
      // A backend built before the registry passes a shorter struct.
      if (c->struct_size >= offsetof(gvirtus_session_info_v1, registry) + sizeof c->registry) {
        state->info.registry = c->registry;
      }
      // A backend built before the module cache passes a shorter struct: no cache.
      if (c->struct_size >= offsetof(gvirtus_session_info_v1, module_cache_max_bytes) +
                                sizeof c->module_cache_max_bytes &&
          c->module_cache_dir != nullptr) {
        state->info.module_cache_dir = c->module_cache_dir;
        state->info.module_cache_max_bytes = c->module_cache_max_bytes;
      }
      // A backend built before client_gone passes a shorter struct: nothing says so.
      if (c->struct_size >=
          offsetof(gvirtus_session_info_v1, client_gone) + sizeof c->client_gone) {
        state->info.client_gone = reinterpret_cast<const std::atomic<int>*>(c->client_gone);
      }
      state->session = plugin().open_session(state->info);
      result->error_kind = 0;
      result->reply = nullptr;
      result->reply_size = 0;
      opened = state.release();
    });
    return opened;
  }

  static void handle(void* session, const gvirtus_call_v1* c, gvirtus_result_v1* result) noexcept {
    guarded(result, [&] {
      ThreadBuffers& b = buffers();
      b.reply.clear();
      FrameHeader header;
      header.flags = c->flags;
      header.call_id = c->call_id;
      header.thread_id = c->thread_id;
      header.request_id = c->request_id;
      header.payload_bytes = static_cast<uint32_t>(c->args_size);
      Call call{
          header,
          WireReader(std::span(static_cast<const std::byte*>(c->args), c->args_size), "request"),
          b.reply};
      static_cast<State*>(session)->session->handle(call);
      result->reply = b.reply.view().data();
      result->reply_size = b.reply.size();
      result->error_kind = 0;
      result->error_message = nullptr;
    });
  }

  static void close_session(void* session) noexcept {
    try {
      delete static_cast<State*>(session);
    } catch (...) {
      // A destructor that throws: nothing can be done at this point.
    }
  }

  // A plugin that cannot say is taken to print (its output is relayed as for any call).
  static int quiet(uint16_t function) noexcept {
    try {
      return plugin().quiet(function) ? 1 : 0;
    } catch (...) {
      return 0;
    }
  }

  static const gvirtus_plugin_table_v1* table() {
    static const PluginIdentity identity = plugin().identity();
    static const std::string name(identity.name);
    static const gvirtus_plugin_table_v1 t{GVIRTUS_BACKEND_PLUGIN_ABI_VERSION,
                                           sizeof(gvirtus_plugin_table_v1),
                                           identity.id,
                                           name.c_str(),
                                           identity.table_hash,
                                           identity.version,
                                           &open_session,
                                           &handle,
                                           &close_session,
                                           &quiet};
    return &t;
  }
};

}  // namespace gvirtus::plugin_export

#define GVIRTUS_EXPORT_BACKEND_PLUGIN(PluginType)                                  \
  gvirtus::BackendPlugin* gvirtus_backend_plugin_object() {                        \
    return &gvirtus::plugin_export::Adapter<PluginType>::plugin();                 \
  }                                                                                \
  extern "C" __attribute__((visibility("default"))) const gvirtus_plugin_table_v1* \
  gvirtus_backend_plugin_v1() {                                                    \
    return gvirtus::plugin_export::Adapter<PluginType>::table();                   \
  }

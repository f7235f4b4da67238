// The frontend's C ABI (frontend_abi.h) over the process-wide Pool: calls go to the calling
// thread's routed member. Every function catches
// everything: a gvirtus::Error becomes its kind and the thread's message, anything else kFailed.
#include "frontend/frontend_abi.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "frontend/call_stats.h"
#include "frontend/client.h"
#include "frontend/host_callbacks.h"
#include "frontend/managed_memory.h"
#include "frontend/managed_variables.h"
#include "frontend/pool.h"

namespace gvirtus {
namespace {

// The thread's last message, in a buffer with no destructor: NVIDIA's runtimes call the driver
// from their exit handlers, after the thread's C++ objects were destroyed, and a call that fails
// then still records its message (a std::string here was written after its destruction).
constexpr size_t kMessageBytes = 1024;
thread_local char t_message[kMessageBytes];

void set_message(std::string_view message) {
  const size_t n = std::min(message.size(), kMessageBytes - 1);  // longer ones are cut
  std::memcpy(t_message, message.data(), n);
  t_message[n] = '\0';
}

int fail(ErrorKind kind, std::string_view message) {
  set_message(message);
  return static_cast<int>(kind);
}

// Runs `body`, turning whatever it throws into a status and the thread's message.
template <typename Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    return GVIRTUS_OK;
  } catch (const Error& e) {
    return fail(e.kind(), e.what());
  } catch (const std::exception& e) {
    return fail(ErrorKind::kFailed, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(ErrorKind::kFailed, "internal error");
  }
}

std::span<const ByteView> as_payload(const gvirtus_piece* pieces, size_t count,
                                     ByteView (&storage)[15]) {
  if (count > std::size(storage)) raise(ErrorKind::kInvalidInput, "too many payload pieces");
  for (size_t i = 0; i < count; ++i) {
    storage[i] = ByteView(static_cast<const std::byte*>(pieces[i].data), pieces[i].size);
  }
  return {storage, count};
}

// A reply decoder of the C ABI as the Client's: its status becomes an Error again.
struct CDecoder {
  gvirtus_reply_decoder decode;
  void* context;
  void operator()(WireReader& in) const {
    if (decode == nullptr) return;
    const std::span<const std::byte> payload = in.get_raw(in.remaining());
    t_message[0] = '\0';
    const int status = decode(context, payload.data(), payload.size());
    if (status == GVIRTUS_OK) return;
    const ErrorKind kind = is_valid_error_kind(static_cast<uint32_t>(status))
                               ? static_cast<ErrorKind>(status)
                               : ErrorKind::kFailed;
    raise(kind, t_message[0] == '\0' ? "the reply could not be decoded" : t_message);
  }
};

// The managed memory a request's transport reads or writes (its payload, its reply's landing),
// pinned resident until the call is done with it (ManagedMirror::make_resident), then unpinned.
// Empty, and costing nothing, for a request that names no managed memory.
class ManagedPins {
 public:
  ManagedPins() = default;
  ManagedPins(ManagedPins&& other) noexcept : ranges_(std::move(other.ranges_)) {}
  ManagedPins& operator=(ManagedPins&&) = delete;
  ManagedPins(const ManagedPins&) = delete;
  ~ManagedPins() {
    for (const auto& [address, bytes] : ranges_) ManagedMirror::instance().unpin(address, bytes);
  }

  // Pins [data, data + bytes) where it is managed memory; false when a fetch failed.
  bool pin(const void* data, size_t bytes, bool for_write) {
    const auto address = reinterpret_cast<uintptr_t>(data);
    bool pinned = false;
    if (!ManagedMirror::instance().make_resident(address, bytes, for_write, &pinned)) return false;
    if (pinned) ranges_.emplace_back(address, bytes);
    return true;
  }

 private:
  std::vector<std::pair<uint64_t, size_t>> ranges_;
};

// Managed memory's coherence before a request goes out (managed_memory.h): the host's writes
// reach the backend first, and what the request reads or its reply writes in managed memory is
// pinned resident (in `pins`, `landing_pins`), so that the transport never faults on it while it
// holds its locks. A mirror's own transfer skips this (it is what this calls).
void before_sending(const gvirtus_piece* pieces, size_t count, const gvirtus_landing* landing,
                    ManagedPins& pins, ManagedPins& landing_pins) {
  ManagedMirror& mirror = ManagedMirror::instance();
  if (!mirror.active() || ManagedMirror::moving()) return;
  bool moved = mirror.flush();
  for (size_t i = 0; i < count && moved; ++i)
    moved = pins.pin(pieces[i].data, pieces[i].size, false);
  if (moved && landing != nullptr && landing->into != nullptr) {
    moved = landing_pins.pin(landing->into, landing->bytes, true);
  }
  if (!moved) {
    raise(ErrorKind::kDisconnected, "managed memory could not be moved to or from the backend");
  }
}

// The landings of calls begun (gvirtus_begin_call_into) and not yet finished that lie in managed
// memory, by request id: pinned until gvirtus_finish_call.
struct PinnedLandings {
  std::mutex mutex;
  std::map<uint64_t, ManagedPins> by_request;
};
// Never destroyed (a call may finish from an exit handler); held by a pointer of static storage,
// which keeps it reachable for the leak checker.
PinnedLandings& pinned_landings() {
  static PinnedLandings* const landings = new PinnedLandings;
  return *landings;
}
std::atomic<size_t> pinned_landing_count{0};  // read without the lock on every finished call

}  // namespace
}  // namespace gvirtus

using gvirtus::ByteView;
using gvirtus::Client;
using gvirtus::Pool;

extern "C" {

uint32_t gvirtus_frontend_abi_version(void) {
  return GVIRTUS_FRONTEND_ABI_VERSION;
}

const char* gvirtus_error_message(void) {
  return gvirtus::t_message;
}

void gvirtus_error_message_set(const char* message) {
  gvirtus::set_message(message != nullptr ? message : "");
}

int gvirtus_open_plugin(const gvirtus_plugin* plugin) {
  return gvirtus::guarded([&] {
    if (plugin == nullptr || plugin->struct_size < sizeof(gvirtus_plugin) ||
        plugin->name == nullptr) {
      gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "gvirtus_open_plugin: a malformed plugin");
    }
    const gvirtus::PluginRef ref{plugin->id, plugin->name, plugin->table_hash};
    Pool::open_in_process(ref, plugin->version);
  });
}

int gvirtus_call(uint32_t call_id, const gvirtus_piece* pieces, size_t count,
                 gvirtus_reply_decoder decode, void* context) {
  return gvirtus::guarded([&] {
    gvirtus::ManagedPins pins, no_landing;
    gvirtus::before_sending(pieces, count, nullptr, pins, no_landing);
    ByteView storage[15];
    const gvirtus::CDecoder decoder{decode, context};
    Pool::instance().routed().call(call_id, gvirtus::as_payload(pieces, count, storage), decoder);
  });
}

int gvirtus_begin_call(uint32_t call_id, const gvirtus_piece* pieces, size_t count,
                       gvirtus_pending* pending) {
  return gvirtus_begin_call_into(call_id, pieces, count, nullptr, pending);
}

int gvirtus_begin_call_into(uint32_t call_id, const gvirtus_piece* pieces, size_t count,
                            gvirtus_landing* landing, gvirtus_pending* pending) {
  return gvirtus::guarded([&] {
    gvirtus::ManagedPins pins, landing_pins;
    gvirtus::before_sending(pieces, count, landing, pins, landing_pins);
    ByteView storage[15];
    const Client::PendingCall begun = Pool::instance().routed().begin_call(
        call_id, gvirtus::as_payload(pieces, count, storage), landing);
    *pending = gvirtus_pending{begun.request_id, begun.call_id, begun.request_bytes};
    if (landing != nullptr && gvirtus::ManagedMirror::instance().active()) {
      gvirtus::PinnedLandings& landings = gvirtus::pinned_landings();
      std::lock_guard lock(landings.mutex);
      landings.by_request.emplace(begun.request_id, std::move(landing_pins));
      gvirtus::pinned_landing_count.store(landings.by_request.size());
    }
  });
}

int gvirtus_finish_call(const gvirtus_pending* pending, gvirtus_reply_decoder decode,
                        void* context) {
  const int status = gvirtus::guarded([&] {
    const gvirtus::CDecoder decoder{decode, context};
    Pool::instance().routed().finish_call(
        Client::PendingCall{pending->request_id, pending->call_id, pending->request_bytes},
        decoder);
  });
  // The reply has landed (or never will): its landing in managed memory is the mirror's again.
  if (gvirtus::pinned_landing_count.load() != 0) {
    gvirtus::PinnedLandings& landings = gvirtus::pinned_landings();
    std::lock_guard lock(landings.mutex);
    landings.by_request.erase(pending->request_id);
    gvirtus::pinned_landing_count.store(landings.by_request.size());
  }
  return status;
}

int gvirtus_send_async(uint32_t call_id, const gvirtus_piece* pieces, size_t count) {
  return gvirtus::guarded([&] {
    gvirtus::ManagedPins pins, no_landing;
    gvirtus::before_sending(pieces, count, nullptr, pins, no_landing);
    ByteView storage[15];
    Pool::instance().routed().send_async(call_id, gvirtus::as_payload(pieces, count, storage));
  });
}

int gvirtus_flush_async(void) {
  return gvirtus::guarded([] { Pool::instance().flush_all(); });
}

int gvirtus_take_async_error(void) {
  std::optional<gvirtus::Error> error;
  const int status =
      gvirtus::guarded([&] { error = Pool::instance().routed().take_async_error(); });
  if (status != GVIRTUS_OK) return status;
  if (!error) return GVIRTUS_OK;
  return gvirtus::fail(error->kind(), error->what());
}

int gvirtus_shared_memory(void** base, size_t* size) {
  return gvirtus::guarded([&] {
    const std::span<std::byte> memory = Pool::instance().routed().shared_memory();
    *base = memory.data();
    *size = memory.size();
  });
}

int gvirtus_shared_take(uint64_t bytes, uint64_t* offset, uint64_t* taken) {
  return gvirtus::guarded([&] {
    *offset = 0;
    *taken = 0;
    if (const auto range = Pool::instance().routed().take_shared(bytes)) {
      *offset = range->offset;
      *taken = range->bytes;
    }
  });
}

int gvirtus_shared_give_back(uint64_t offset) {
  return gvirtus::guarded([&] { Pool::instance().routed().give_back_shared(offset); });
}

int gvirtus_host_memory_register(const void* addr, uint64_t bytes) {
  return gvirtus::guarded(
      [&] { Pool::instance().register_host_memory(addr, static_cast<size_t>(bytes)); });
}

int gvirtus_host_memory_unregister(const void* addr, uint64_t bytes) {
  return gvirtus::guarded(
      [&] { Pool::instance().unregister_host_memory(addr, static_cast<size_t>(bytes)); });
}

namespace {
std::atomic<uint64_t> g_device_generation{0};  // for the process: every stub reads the same
}  // namespace

uint64_t gvirtus_device_generation(void) {
  return g_device_generation.load(std::memory_order_acquire);
}

void gvirtus_device_generation_bump(void) {
  g_device_generation.fetch_add(1, std::memory_order_acq_rel);
}

namespace {
std::atomic<uint64_t> g_runtime_context_settings{0};
thread_local int t_runtime_device = 0;
thread_local uint64_t t_runtime_setting = 0;
}  // namespace

void gvirtus_runtime_context_set(int device) {
  t_runtime_device = device;
  t_runtime_setting = g_runtime_context_settings.fetch_add(1, std::memory_order_relaxed) + 1;
}

uint64_t gvirtus_runtime_context(int* device) {
  if (device != nullptr && t_runtime_setting != 0) *device = t_runtime_device;
  return t_runtime_setting;
}

uint64_t gvirtus_host_callback_add(const gvirtus_host_callback* callback) {
  if (callback == nullptr || callback->run == nullptr) return 0;
  try {
    return gvirtus::add_host_callback(*callback);
  } catch (...) {
    return 0;  // out of memory
  }
}

int gvirtus_host_callback_find(uint64_t token, gvirtus_host_callback* callback) {
  if (callback == nullptr) return 0;
  const auto found = gvirtus::find_host_callback(token);
  if (!found) return 0;
  *callback = *found;
  return 1;
}

void gvirtus_host_callback_drop(uint64_t token) {
  gvirtus::drop_host_callback(token);
}

int gvirtus_host_callbacks_serve(uint32_t next_call_id) {
  return gvirtus::guarded([&] { gvirtus::serve_host_callbacks(next_call_id); });
}

const void* gvirtus_session_token(void) {
  try {
    return &Pool::instance().routed();
  } catch (...) {
    return gvirtus::t_message;  // never null; instance() does not throw in practice
  }
}

uint32_t gvirtus_pool_size(void) {
  try {
    return static_cast<uint32_t>(Pool::instance().size());
  } catch (...) {
    return 1;  // instance() does not throw in practice; a pool has at least one member
  }
}

const char* gvirtus_pool_backend_name(uint32_t backend) {
  try {
    Pool& pool = Pool::instance();
    return backend < pool.size() ? pool.name(backend).c_str() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

const char* gvirtus_pool_device_selection(void) {
  try {
    return Pool::instance().device_selection().c_str();
  } catch (...) {
    return "";
  }
}

int gvirtus_pool_backend_host(uint32_t backend, char* host, size_t size) {
  return gvirtus::guarded([&] {
    Pool& pool = Pool::instance();
    if (backend >= pool.size() || host == nullptr || size == 0) {
      gvirtus::raise(gvirtus::ErrorKind::kInvalidInput,
                     "gvirtus_pool_backend_host: no such backend");
    }
    const std::string text = pool.member(backend).tcp_host();
    if (text.size() >= size) {
      gvirtus::raise(gvirtus::ErrorKind::kInvalidInput,
                     "gvirtus_pool_backend_host: " + text + " is longer than the buffer");
    }
    text.copy(host, text.size());
    host[text.size()] = '\0';
  });
}

int gvirtus_route_set(uint32_t backend) {
  return gvirtus::guarded([&] { Pool::instance().set_route(backend); });
}

uint32_t gvirtus_route_get(void) {
  return Pool::route();
}

uint32_t gvirtus_thread_id(void) {
  return Client::current_thread_id();
}

void gvirtus_stats_note_work(const char* what, uint64_t bytes, uint64_t nanoseconds) {
  try {
    if (what != nullptr) gvirtus::note_stats_work(what, bytes, nanoseconds);
  } catch (...) {
    // Statistics only.
  }
}

void gvirtus_register_call_names(uint16_t plugin, const char* plugin_name,
                                 gvirtus_call_namer namer) {
  try {
    gvirtus::register_call_names(plugin, plugin_name != nullptr ? plugin_name : "?", namer);
  } catch (...) {
    // Names only decorate the GVIRTUS_STATS table.
  }
}

}  // extern "C"

namespace {

// A stub's transfer functions as the mirror takes them.
gvirtus::ManagedTransfer stub_transfer(gvirtus_managed_move fetch, gvirtus_managed_move flush,
                                       void* context) {
  return {
      [=](uint64_t at, void* host, size_t n) { return fetch(context, at, host, n) == GVIRTUS_OK; },
      [=](uint64_t at, const void* host, size_t n) {
        return flush(context, at, const_cast<void*>(host), n) == GVIRTUS_OK;
      }};
}

}  // namespace

int gvirtus_managed_map(uint64_t address, uint64_t bytes, gvirtus_managed_move fetch,
                        gvirtus_managed_move flush, void* context) {
  return gvirtus::guarded([&] {
    if (fetch == nullptr || flush == nullptr) {
      gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "gvirtus_managed_map: no transfers");
    }
    std::string why;
    if (!gvirtus::ManagedMirror::instance().map(address, static_cast<size_t>(bytes),
                                                stub_transfer(fetch, flush, context), why)) {
      gvirtus::raise(gvirtus::ErrorKind::kFailed, why);
    }
  });
}

int gvirtus_managed_map_variable(const void* owner, uint64_t address, uint64_t bytes,
                                 gvirtus_managed_move fetch, gvirtus_managed_move flush,
                                 void* context) {
  return gvirtus::guarded([&] {
    if (fetch == nullptr || flush == nullptr) {
      gvirtus::raise(gvirtus::ErrorKind::kInvalidInput,
                     "gvirtus_managed_map_variable: no transfers");
    }
    std::string why;
    if (!gvirtus::ManagedVariables::instance().add(reinterpret_cast<const void*>(fetch), owner,
                                                   address, bytes,
                                                   stub_transfer(fetch, flush, context), why)) {
      gvirtus::raise(gvirtus::ErrorKind::kFailed, why);
    }
  });
}

void gvirtus_managed_unmap_owner(const void* owner, gvirtus_managed_move fetch) {
  try {
    gvirtus::ManagedVariables::instance().remove_owner(reinterpret_cast<const void*>(fetch), owner);
  } catch (...) {  // nothing crosses the C ABI; what is left mapped is harmless
  }
}

int gvirtus_managed_unmap(uint64_t address) {
  return gvirtus::guarded([&] {
    if (!gvirtus::ManagedMirror::instance().unmap(address)) {
      gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "no managed region starts there");
    }
  });
}

void gvirtus_managed_invalidate(uint64_t address, uint64_t bytes) {
  gvirtus::ManagedMirror::instance().invalidate(address, static_cast<size_t>(bytes));
}

int gvirtus_managed_find(uint64_t address, uint64_t* base, uint64_t* bytes) {
  uint64_t start = 0;
  size_t size = 0;
  if (!gvirtus::ManagedMirror::instance().find(address, start, size)) return 0;
  if (base != nullptr) *base = start;
  if (bytes != nullptr) *bytes = size;
  return 1;
}

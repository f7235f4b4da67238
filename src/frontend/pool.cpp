#include "frontend/pool.h"

#include <pthread.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <utility>

#include "common/error.h"
#include "common/log.h"

namespace gvirtus {
namespace {

std::mutex& instance_mutex() {
  static std::mutex mutex;
  return mutex;
}
Pool* g_instance = nullptr;  // guarded by instance_mutex(); reset in a forked child
std::vector<PluginRef>& registered_plugins() {
  static std::vector<PluginRef> plugins;
  return plugins;
}

thread_local uint32_t t_route = 0;

// Adds a plugin for every session this process starts, once. Called with instance_mutex() held.
void register_plugin_locked(PluginRef plugin) {
  for (const PluginRef& p : registered_plugins()) {
    if (p.id == plugin.id) return;
  }
  registered_plugins().push_back(std::move(plugin));
}

// A forked child must not share its parent's sessions: it forgets the parent's pool (never
// destroying it, since its locks may be held by threads that do not exist in the child) and
// connects anew. The forgotten pools stay reachable here, so a leak checker in the child does not
// take them for leaks (the first few generations' are enough for that).
Pool* g_forgotten[8] = {};
void forget_pool_in_child() {
  for (Pool*& slot : g_forgotten) {
    if (slot == nullptr) {
      slot = g_instance;
      break;
    }
  }
  g_instance = nullptr;
}

// At exit, the process-wide pool (never destroyed: threads may still use it) sends the
// asynchronous calls its members still hold. Another thread may be inside a send at that moment,
// so each member's send lock is only tried, for a while (Client::flush_async).
void flush_at_exit() {
  Pool* pool = g_instance;
  if (pool == nullptr) return;
  try {
    pool->flush_all();
  } catch (...) {
    // Exiting: the failure was logged when it happened.
  }
}

// Last of all at process exit: a shared object's destructor runs after every atexit handler and
// static destructor of the program, which may still make CUDA calls. The sessions end here so
// that the backends see their client leave at once: otherwise only the process's death tells
// them, which a transport without a socket (shm's file mode, across a VM boundary) notices only
// after dead_after_ms, keeping the segment from the next client that long.
__attribute__((destructor)) void end_sessions_at_process_end() {
  Pool* pool = g_instance;
  if (pool != nullptr) pool->end_all_at_exit();
}

}  // namespace

Pool::Pool(const Config& config, const std::vector<PluginRef>& plugins) {
  std::vector<PoolMember> members = pool_members(config);
  std::optional<std::string> selection;  // one backend: its own, as the configuration says
  std::optional<Error> refused;
  if (members.size() > 1) {
    selection = std::string();  // the members' every device; the stubs select over the union
    try {
      device_selection_ = effective_visible_devices(config);
    } catch (const Error& e) {
      refused = e;  // a malformed GVIRTUS_VISIBLE_DEVICES: every call says why
    }
  }
  for (PoolMember& m : members) {
    auto client = std::make_unique<Client>(std::move(m.config), plugins, selection);
    if (refused) client->fail(*refused);
    members_.push_back(Member{std::move(m.name), std::move(client)});
  }
}

Pool::Pool(const Error& failure) {
  auto client = std::make_unique<Client>(Config{}, std::vector<PluginRef>{});
  client->fail(failure);
  members_.push_back(Member{{}, std::move(client)});
}

Pool& Pool::instance() {
  std::lock_guard lock(instance_mutex());
  if (g_instance == nullptr) {
    static const bool atfork_installed = [] {
      ::pthread_atfork(nullptr, nullptr, forget_pool_in_child);
      std::atexit(flush_at_exit);
      return true;
    }();
    (void)atfork_installed;
    try {
      g_instance = new Pool(load_config(find_config()), registered_plugins());
    } catch (const Error& e) {
      // A broken configuration fails every call with the reason, instead of killing the app.
      GVIRTUS_LOG(kError) << e.what();
      g_instance = new Pool(e);
    }
  }
  return *g_instance;
}

void Pool::add_plugin(PluginRef plugin) {
  std::lock_guard lock(instance_mutex());
  register_plugin_locked(std::move(plugin));
}

void Pool::open_in_process(const PluginRef& plugin, uint32_t version) {
  Pool* pool;
  {
    std::lock_guard lock(instance_mutex());
    pool = g_instance;
    if (pool == nullptr) {  // the sessions, when they start, open it in their handshakes
      register_plugin_locked(plugin);
      return;
    }
  }
  std::optional<Error> refusal;
  for (Member& m : pool->members_) {
    try {
      m.client->open_plugin(plugin, version);
    } catch (const Error& e) {
      if (!refusal) refusal = e;
    }
  }
  // A refused plugin is not remembered: a forked child's handshake must not fail on it.
  if (refusal) throw *refusal;
  add_plugin(plugin);
}

Client& Pool::routed() {
  const uint32_t index = t_route;
  // A route set in a larger pool (a test's, or before a fork into another configuration) is
  // checked again here rather than trusted.
  if (index >= members_.size()) set_route(index);
  return *members_[index].client;
}

uint32_t Pool::route() {
  return t_route;
}

void Pool::set_route(uint32_t index) {
  if (index >= members_.size()) {
    raise(ErrorKind::kInvalidInput, "no backend " + std::to_string(index) + " in a pool of " +
                                        std::to_string(members_.size()));
  }
  t_route = index;
}

void Pool::register_host_memory(const void* addr, size_t bytes) {
  for (Member& m : members_) m.client->register_host_memory(addr, bytes);
}

void Pool::unregister_host_memory(const void* addr, size_t bytes) {
  for (Member& m : members_) m.client->unregister_host_memory(addr, bytes);
}

void Pool::flush_all() {
  std::optional<Error> first;
  for (Member& m : members_) {
    try {
      m.client->flush_async();
    } catch (const Error& e) {
      if (!first) first = e;
    }
  }
  if (first) throw *first;
}

void Pool::end_all_at_exit() {
  for (Member& m : members_) m.client->end_at_exit();
}

}  // namespace gvirtus

// The process's backends: a client's pool (issue 22, docs/cluster.md).
//
// A configuration whose "communicator" entries name a "backend" describes several backends that
// one application uses together; one that names none describes one backend, as before. The
// process has one Pool (Pool::instance()) with one Client, one session, per backend, in the order
// the backends first appear in the configuration; each connects lazily, on its first call, to the
// first of its endpoints that answers.
//
// Routing: every call a thread makes goes to its route, the member it last chose (set_route();
// member 0 until then), as CUDA's calls go to the thread's current device. A stub library routes
// each call by what it is about (a device, a context, a pointer) before sending it; the frontend's
// C ABI (frontend_abi.h) sends to the calling thread's route.
//
// Faults are confined to a member: a backend that cannot be reached or dies fails the calls routed
// to it, at once and with the same error from then on, and nothing else. The other members go on.
//
// A forked child gets its own Pool (and so its own sessions) on its first call; a thread keeps its
// route across the fork, as the child's configuration is the parent's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "frontend/client.h"
#include "protocol/call_table.h"

namespace gvirtus {

class Pool {
 public:
  // A pool over `config`'s backends; `plugins` open in each member's session. A multi-backend
  // pool sends no device selection to its members: a selection counts over the union of their
  // devices (docs/cluster.md), which the stubs apply (device_selection()).
  Pool(const Config& config, const std::vector<PluginRef>& plugins);
  // A pool whose every call fails with `failure` (a configuration that could not be read).
  explicit Pool(const Error& failure);

  // The process-wide pool: configuration from find_config(), plugins from open_in_process() (or
  // add_plugin()) calls made before the first use.
  static Pool& instance();
  static void add_plugin(PluginRef plugin);
  // Opens `plugin` in every member's session, now and in every pool a forked child makes. Throws
  // the first refusal (a member that refused it fails that plugin's calls; the others serve them).
  static void open_in_process(const PluginRef& plugin, uint32_t version);

  size_t size() const { return members_.size(); }
  // The member's "backend" name; empty for a configuration that names none.
  const std::string& name(size_t index) const { return members_.at(index).name; }
  Client& member(size_t index) { return *members_.at(index).client; }

  // A multi-backend pool's device selection over the union of its members' devices
  // (effective_visible_devices: "2,0", "none", or "" for every device); "" for one backend,
  // whose selection its backend applies.
  const std::string& device_selection() const { return device_selection_; }

  // The calling thread's member.
  Client& routed();
  // The calling thread's route (0 until it sets one). Per thread, kept across a fork.
  static uint32_t route();
  // Routes the calling thread's next calls to member `index`. Throws Error{kInvalidInput} naming
  // the pool's size when there is no such member.
  void set_route(uint32_t index);

  // Client::register_host_memory() / unregister_host_memory() on every member: page-locked
  // memory may be copied to any backend's devices.
  void register_host_memory(const void* addr, size_t bytes);
  void unregister_host_memory(const void* addr, size_t bytes);

  // Sends every member's held asynchronous calls now; the first failure is thrown after all.
  void flush_all();
  // Client::end_at_exit() on every member (the process is exiting).
  void end_all_at_exit();

 private:
  struct Member {
    std::string name;
    std::unique_ptr<Client> client;
  };
  std::vector<Member> members_;
  std::string device_selection_;
};

}  // namespace gvirtus

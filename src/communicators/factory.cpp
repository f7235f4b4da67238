#include "communicators/factory.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "common/error.h"
#include "common/log.h"
#include "common/paths.h"
#include "communicators/shm/shm_communicator.h"
#include "communicators/tcp/tcp_communicator.h"
#include "communicators/vsock/vsock_communicator.h"

namespace gvirtus {
namespace {

// Transports whose code lives in a plugin library, named here so that a config naming them finds
// the right file: suite/protocol values -> libgvirtus-comm-<plugin>.so.
struct PluginTransport {
  const char* plugin;
  std::vector<std::string> suites;
  std::vector<std::string> protocols;
};

const std::vector<PluginTransport>& plugin_transports() {
  static const std::vector<PluginTransport> list = {
      {"rdma", {"infiniband-rdma", "rdma"}, {"ib", "rdma"}},
  };
  return list;
}

struct Registry {
  std::mutex mutex;
  std::vector<TransportInfo> transports;
  Registry() { transports = {tcp_transport_info(), shm_transport_info(), vsock_transport_info()}; }
};

Registry& registry() {
  static Registry instance;
  return instance;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

const TransportInfo* find_locked(Registry& r, const EndpointConfig& endpoint) {
  for (const TransportInfo& info : r.transports) {
    if (contains(info.suites, endpoint.suite()) && contains(info.protocols, endpoint.protocol())) {
      return &info;
    }
  }
  return nullptr;
}

std::vector<std::filesystem::path> plugin_dirs() {
  const auto here = module_dir(reinterpret_cast<const void*>(&make_communicator));
  return {here / "gvirtus", here / ".." / "gvirtus", here / ".." / "lib" / "gvirtus",
          executable_dir() / ".." / "lib", executable_dir() / ".." / "lib" / "gvirtus"};
}

// Loads the plugin that provides a known external transport. Its entry point registers it.
void load_plugin(const PluginTransport& transport, const EndpointConfig& endpoint) {
  const std::string file = std::string("libgvirtus-comm-") + transport.plugin + ".so";
  std::string tried;
  for (const auto& dir : plugin_dirs()) {
    const auto path = dir / file;
    if (!std::filesystem::exists(path)) {
      tried += " " + path.string();
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      raise(ErrorKind::kFailed, endpoint.where() + ": cannot load the " + transport.plugin +
                                    " communicator plugin " + path.string() + ": " + ::dlerror());
    }
    auto* entry =
        reinterpret_cast<CommunicatorPluginEntry*>(::dlsym(handle, kCommunicatorPluginEntry));
    if (entry == nullptr) {
      raise(ErrorKind::kFailed, path.string() + " has no " + kCommunicatorPluginEntry);
    }
    entry(&register_transport);  // the handle stays open for the life of the process, like any
                                 // transport's code
    GVIRTUS_LOG(kInfo) << "loaded communicator plugin " << path.string();
    return;
  }
  raise(ErrorKind::kFailed, endpoint.where() + ": the " + transport.plugin +
                                " communicator is not installed (looked for" + tried + ")");
}

}  // namespace

void register_transport(TransportInfo info) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.transports.push_back(std::move(info));
}

std::vector<std::string> transport_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const TransportInfo& info : r.transports) names.push_back(info.name);
  for (const PluginTransport& p : plugin_transports()) {
    if (!contains(names, p.plugin)) names.push_back(p.plugin);
  }
  return names;
}

std::unique_ptr<Communicator> make_communicator(const EndpointConfig& endpoint,
                                                size_t max_message_bytes) {
  Registry& r = registry();
  CommunicatorMaker make;
  {
    std::lock_guard lock(r.mutex);
    if (const TransportInfo* info = find_locked(r, endpoint)) make = info->make;
  }
  if (!make) {
    for (const PluginTransport& p : plugin_transports()) {
      if (contains(p.suites, endpoint.suite()) && contains(p.protocols, endpoint.protocol())) {
        load_plugin(p, endpoint);
        std::lock_guard lock(r.mutex);
        if (const TransportInfo* info = find_locked(r, endpoint)) make = info->make;
      }
    }
  }
  if (!make) {
    std::string known;
    for (const std::string& name : transport_names()) known += (known.empty() ? "" : ", ") + name;
    raise(ErrorKind::kInvalidInput, endpoint.where() + ": unknown transport suite \"" +
                                        endpoint.suite() + "\" / protocol \"" +
                                        endpoint.protocol() + "\" (known transports: " + known +
                                        "; see docs/configuration.md)");
  }
  return make(endpoint, max_message_bytes);
}

}  // namespace gvirtus

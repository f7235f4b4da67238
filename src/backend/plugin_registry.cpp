#include "backend/plugin_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

#include "backend/abi_plugin.h"
#include "backend/core_plugin.h"
#include "common/error.h"
#include "common/log.h"
#include "common/paths.h"

namespace gvirtus {
namespace {

bool is_plain_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// The plugin table of a loaded library, checked; or null with why it cannot be served (a plugin
// built for another ABI, or a table that is not sound). Throws for a library that is no gvirtus
// plugin at all.
const gvirtus_plugin_table_v1* entry_table(void* handle, const std::string& path,
                                           const std::string& name, std::string& refusal) {
  using Entry = gvirtus_backend_plugin_entry_v1;
  if (auto* entry = reinterpret_cast<Entry>(::dlsym(handle, GVIRTUS_BACKEND_PLUGIN_ENTRY_V1))) {
    const gvirtus_plugin_table_v1* t = entry();
    if (t == nullptr || t->abi_version != GVIRTUS_BACKEND_PLUGIN_ABI_VERSION ||
        t->struct_size < GVIRTUS_PLUGIN_TABLE_V1_MIN_SIZE || t->name == nullptr ||
        t->open_session == nullptr || t->handle == nullptr || t->close_session == nullptr) {
      refusal = path + ": its " GVIRTUS_BACKEND_PLUGIN_ENTRY_V1 " table is malformed";
      return nullptr;
    }
    if (name != t->name) {
      refusal = path + " declares itself as plugin \"" + t->name + "\"";
      return nullptr;
    }
    return t;
  }
  // Newest first: a plugin built for a backend newer than this one.
  for (int version = 9; version > static_cast<int>(GVIRTUS_BACKEND_PLUGIN_ABI_VERSION); --version) {
    const std::string symbol = "gvirtus_backend_plugin_v" + std::to_string(version);
    if (::dlsym(handle, symbol.c_str()) != nullptr) {
      refusal = path + " was built for backend plugin ABI " + std::to_string(version) +
                ", and this backend speaks ABI " +
                std::to_string(GVIRTUS_BACKEND_PLUGIN_ABI_VERSION) +
                ": install a gvirtus backend as new as the plugin";
      return nullptr;
    }
  }
  if (::dlsym(handle, GVIRTUS_BACKEND_PLUGIN_ENTRY_CXX) != nullptr) {
    refusal = path + " was built for the C++ plugin interface that preceded backend plugin ABI " +
              std::to_string(GVIRTUS_BACKEND_PLUGIN_ABI_VERSION) +
              ": rebuild it against this gvirtus (backend/plugin_abi.h)";
    return nullptr;
  }
  raise(ErrorKind::kFailed,
        path + " is not a gvirtus plugin (no " GVIRTUS_BACKEND_PLUGIN_ENTRY_V1 ")");
}

}  // namespace

PluginRegistry::PluginRegistry() {
  add(core_plugin());
}

void PluginRegistry::add(BackendPlugin* plugin) {
  const uint16_t id = plugin->identity().id;
  if (find(id) != nullptr) {
    raise(ErrorKind::kInvalidInput, "plugin \"" + std::string(plugin->identity().name) +
                                        "\" is loaded twice (id " + std::to_string(id) + ")");
  }
  plugins_.push_back(plugin);
}

void PluginRegistry::load(const std::string& name) {
  if (!is_plain_name(name)) {
    raise(ErrorKind::kInvalidInput,
          "plugin name \"" + name + "\" is not a plain name ([a-z0-9_-], at most 64)");
  }
  for (const auto& [id, configured] : loaded_) {
    if (configured == name) return;  // named by several endpoints
  }
  // A variant ("cuda-simulated") serves its plugin's ("cuda") calls, under that plugin's name.
  const std::string served = name.substr(0, name.find('-'));
  for (BackendPlugin* p : plugins_) {
    if (p->identity().name == served) {
      raise(ErrorKind::kInvalidInput,
            "plugin \"" + name + "\" serves the calls of \"" + served +
                "\", which another configured plugin serves already: " + "name one of them");
    }
  }
  for (const auto& [refused, why] : refused_) {
    if (refused == served) return;
  }
  const std::string file = "libgvirtus-plugin-" + name + ".so";
  std::string tried;
  for (const auto& dir : plugin_dirs()) {
    const auto path = dir / file;
    if (!std::filesystem::exists(path)) {
      tried += " " + path.lexically_normal().string();
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      raise(ErrorKind::kFailed, "cannot load plugin " + path.string() + ": " + ::dlerror());
    }
    std::string refusal;
    const gvirtus_plugin_table_v1* table = entry_table(handle, path.string(), served, refusal);
    if (table == nullptr) {
      // Only sessions that ask for it are refused; the daemon and other plugins go on.
      GVIRTUS_LOG(kError) << "plugin \"" << name << "\" cannot be served: " << refusal;
      refused_.emplace_back(served, refusal);
      return;
    }
    BackendPlugin* plugin = adapt_abi_plugin(table);
    add(plugin);
    loaded_.emplace_back(plugin->identity().id, name);
    GVIRTUS_LOG(kInfo) << "loaded plugin " << name << " from " << path.string()
                       << " (backend plugin ABI " << table->abi_version << ")";
    return;
  }
  raise(ErrorKind::kFailed, "plugin \"" + name + "\" is not installed (looked for" + tried + ")");
}

BackendPlugin* PluginRegistry::find(uint16_t id) const {
  for (BackendPlugin* p : plugins_) {
    if (p->identity().id == id) return p;
  }
  return nullptr;
}

std::optional<std::string> PluginRegistry::refusal(const std::string& name) const {
  for (const auto& [refused, why] : refused_) {
    if (refused == name) return why;
  }
  return std::nullopt;
}

std::string PluginRegistry::configured_name(uint16_t id) const {
  for (const auto& [loaded, name] : loaded_) {
    if (loaded == id) return name;
  }
  const BackendPlugin* p = find(id);
  return p != nullptr ? std::string(p->identity().name) : std::string();
}

std::vector<std::pair<uint16_t, std::string>> PluginRegistry::served() const {
  std::vector<std::pair<uint16_t, std::string>> out;
  for (BackendPlugin* p : plugins_) {
    out.emplace_back(p->identity().id, configured_name(p->identity().id));
  }
  return out;
}

std::string PluginRegistry::names() const {
  std::string out;
  for (BackendPlugin* p : plugins_)
    out += (out.empty() ? "" : ", ") + configured_name(p->identity().id);
  return out;
}

}  // namespace gvirtus

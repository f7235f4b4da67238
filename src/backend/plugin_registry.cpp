#include "backend/plugin_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

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
  for (BackendPlugin* p : plugins_) {
    if (p->identity().name == name) return;  // named by several endpoints
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
    auto* entry = reinterpret_cast<BackendPluginEntry*>(::dlsym(handle, kBackendPluginEntry));
    if (entry == nullptr) {
      raise(ErrorKind::kFailed,
            path.string() + " is not a gvirtus plugin (no " + kBackendPluginEntry + ")");
    }
    add(entry());
    GVIRTUS_LOG(kInfo) << "loaded plugin " << name << " from " << path.string();
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

std::string PluginRegistry::names() const {
  std::string out;
  for (BackendPlugin* p : plugins_)
    out += (out.empty() ? "" : ", ") + std::string(p->identity().name);
  return out;
}

}  // namespace gvirtus

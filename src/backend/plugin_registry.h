// The plugins a backend serves: the built-in core plugin plus those named in properties.json.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/plugin.h"

namespace gvirtus {

class PluginRegistry {
 public:
  // Starts with the core plugin only.
  PluginRegistry();

  // Loads libgvirtus-plugin-<name>.so from the plugin directories; a name that is not a plain
  // identifier, a missing file or a missing entry point is an error saying which.
  void load(const std::string& name);

  // Adds a plugin object (tests, built-in plugins).
  void add(BackendPlugin* plugin);

  // The plugin with this id, or nullptr.
  BackendPlugin* find(uint16_t id) const;

  std::string names() const;  // "core, cudart"

 private:
  std::vector<BackendPlugin*> plugins_;  // not owned: plugins live as long as the process
};

}  // namespace gvirtus

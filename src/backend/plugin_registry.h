// The plugins a backend serves: the built-in core plugin plus those named in properties.json.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/plugin.h"

namespace gvirtus {

class PluginRegistry {
 public:
  // Starts with the core plugin only.
  PluginRegistry();

  // Loads libgvirtus-plugin-<name>.so from the plugin directories (backend/plugin_abi.h); a name
  // that is not a plain identifier, a missing file or a library that is no gvirtus plugin is an
  // error saying which. A name "P-VARIANT" is a variant of plugin P: its library declares itself
  // as P and serves P's calls (cuda-simulated serves cuda's on the simulated device); naming two
  // plugins that serve one plugin's calls is an error. A plugin built for another plugin ABI, or
  // whose table is not sound, is refused: logged now, and named with the reason to each session
  // that asks for it (refusal()).
  void load(const std::string& name);

  // Why a configured plugin cannot be served, if it was refused at load.
  std::optional<std::string> refusal(const std::string& name) const;

  // Adds a plugin object (tests, built-in plugins).
  void add(BackendPlugin* plugin);

  // The plugin with this id, or nullptr.
  BackendPlugin* find(uint16_t id) const;

  std::string names() const;  // "core, cudart, cuda-simulated"
  // Every plugin served, core first: its id and configured name.
  std::vector<std::pair<uint16_t, std::string>> served() const;

  // The name the configuration gave the plugin with this id ("cuda-simulated" for a variant), so
  // that status and logs say which variant serves; the plugin's own name for a built-in one.
  std::string configured_name(uint16_t id) const;

 private:
  std::vector<BackendPlugin*> plugins_;  // not owned: plugins live as long as the process
  std::vector<std::pair<std::string, std::string>> refused_;  // served name, why
  std::vector<std::pair<uint16_t, std::string>> loaded_;      // id, configured name
};

}  // namespace gvirtus

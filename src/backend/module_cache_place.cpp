#include "backend/module_cache_place.h"

#include <cstdlib>
#include <string>

#include "backend/services/module_cache.h"
#include "common/error.h"
#include "common/log.h"

namespace gvirtus {
namespace {

std::optional<std::filesystem::path> from_variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  std::string text(value);
  // systemd lists several directories separated by ':' when the unit names several.
  if (const auto colon = text.find(':'); colon != std::string::npos) text.resize(colon);
  return std::filesystem::path(text);
}

// The bound on one entry: the largest module image either side accepts.
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;

}  // namespace

std::optional<std::filesystem::path> default_module_cache_dir() {
  if (auto dir = from_variable("CACHE_DIRECTORY")) return *dir / "modules";
  if (auto dir = from_variable("XDG_CACHE_HOME")) return *dir / "gvirtus" / "modules";
  if (auto dir = from_variable("HOME")) return *dir / ".cache" / "gvirtus" / "modules";
  return std::nullopt;
}

ModuleCacheConfig settle_module_cache(const ModuleCacheConfig& configured) {
  ModuleCacheConfig settled = configured;
  if (settled.max_bytes == 0) {
    GVIRTUS_LOG(kNotice) << "module cache: off (module_cache.max_bytes is 0)";
    settled.path.clear();
    return settled;
  }
  const bool named = !settled.path.empty();
  if (!named) {
    const auto place = default_module_cache_dir();
    if (!place) {
      GVIRTUS_LOG(kWarning) << "module cache: off (no CACHE_DIRECTORY, XDG_CACHE_HOME or HOME "
                               "to put it in; set module_cache.path)";
      settled.max_bytes = 0;
      return settled;
    }
    settled.path = place->string();
  }
  try {
    services::ModuleCache cache(settled.path, settled.max_bytes, kMaxEntryBytes);
    cache.clean_dead_writers();
    const auto usage = cache.usage();
    GVIRTUS_LOG(kNotice) << "module cache: " << settled.path << " (" << usage.entries
                         << " entries, " << usage.bytes << " of at most " << settled.max_bytes
                         << " bytes)";
  } catch (const Error& e) {
    if (named) throw;
    GVIRTUS_LOG(kWarning) << "module cache: off: " << e.what();
    settled.path.clear();
    settled.max_bytes = 0;
  }
  return settled;
}

}  // namespace gvirtus

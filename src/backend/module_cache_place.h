// Where the backend's module cache lives (backend/services/module_cache.h), settled once when the
// daemon starts, so that a directory that cannot be used is reported then, not by every session.
//
// The place, unless the configuration names one ("module_cache": {"path": ...}):
//   1. $CACHE_DIRECTORY/modules - systemd's CacheDirectory= (the packaged unit sets it);
//   2. $XDG_CACHE_HOME/gvirtus/modules;
//   3. $HOME/.cache/gvirtus/modules;
// and none (the cache off, with a warning) when none of these is set.
#pragma once

#include <filesystem>
#include <optional>

#include "common/config.h"

namespace gvirtus {

// The default place, from the environment; nothing when it names none.
std::optional<std::filesystem::path> default_module_cache_dir();

// The cache the sessions use: `configured` with its place settled (empty path or max_bytes 0: no
// cache). Creates the directory and removes what writers killed mid-write left. A directory the
// configuration names that cannot be used throws Error naming it; the default place falls back to
// no cache, with a warning, so that the default configuration always starts.
ModuleCacheConfig settle_module_cache(const ModuleCacheConfig& configured);

}  // namespace gvirtus

// Where gvirtus finds its own files at run time, relative to the running executable or library,
// so that the build tree and any install prefix work without configuration.
//
// An install prefix P (cmake --install --prefix P, or P=/usr for the .deb packages) holds:
//   P/bin/gvirtus-*                  the programs
//   P/lib/gvirtus/                   backend plugins (libgvirtus-plugin-<name>.so)
//   P/lib/gvirtus/stub/              the stub libcudart.so.13 (only gvirtus-run puts it on the
//   path) P/etc/gvirtus/properties.json    the default configuration (/etc/gvirtus when P is /usr)
// The build tree has the same shape (build/bin, build/lib/gvirtus, build/lib/stub); its default
// configuration is the source tree's etc/properties.json.
#pragma once

#include <filesystem>
#include <vector>

namespace gvirtus {

// The directory holding the running executable (/proc/self/exe).
std::filesystem::path executable_dir();

// The directory holding the shared object or executable that contains `address_in_it`.
std::filesystem::path module_dir(const void* address_in_it);

// The prefix gvirtus runs from: $GVIRTUS_HOME when set, else the prefix that holds this code (the
// program's bin/.., or for the stub inside an application the stub's lib/gvirtus/stub/../../..).
std::filesystem::path gvirtus_home();

// The prefix derived from where a module lives (`module_dir` of bin/, lib/gvirtus, lib/stub...).
std::filesystem::path home_of_module_dir(const std::filesystem::path& dir);

// Default configuration files under a prefix, most specific first.
std::vector<std::filesystem::path> config_candidates(const std::filesystem::path& home);

// Directories searched for backend plugins, most specific first.
std::vector<std::filesystem::path> plugin_dirs();

// Directories where the stub libcudart.so.13 may be, most specific first (gvirtus-run).
std::vector<std::filesystem::path> stub_dirs();

}  // namespace gvirtus

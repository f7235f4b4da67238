#include "common/paths.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

namespace gvirtus {

namespace {

// The paths in normal form, each once, in their first order (for "looked in ..." messages).
std::vector<std::filesystem::path> unique_normal(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::filesystem::path> out;
  for (const auto& p : paths) {
    const auto normal = p.lexically_normal();
    if (std::find(out.begin(), out.end(), normal) == out.end()) out.push_back(normal);
  }
  return out;
}

}  // namespace

std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(".") : exe.parent_path();
}

std::filesystem::path module_dir(const void* address_in_it) {
  Dl_info info{};
  link_map* map = nullptr;
  if (::dladdr1(address_in_it, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 ||
      info.dli_fname == nullptr || map == nullptr || map->l_name == nullptr ||
      map->l_name[0] == '\0') {
    // The main program's link map has no name (its dli_fname is argv[0], maybe relative).
    return executable_dir();
  }
  std::error_code ec;
  const auto path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname).parent_path() : path.parent_path();
}

std::filesystem::path home_of_module_dir(const std::filesystem::path& dir) {
  std::filesystem::path home = dir.lexically_normal();
  if (!home.has_filename()) home = home.parent_path();  // a trailing separator
  // Peel the known layers: [lib[/<multiarch>]/gvirtus[/stub] | lib/stub | bin].
  if (home.filename() == "stub") home = home.parent_path();
  if (home.filename() == "gvirtus") home = home.parent_path();
  if (home.filename().string().find("-linux-") != std::string::npos) home = home.parent_path();
  const std::string last = home.filename().string();
  if (last == "bin" || last == "lib" || last == "lib64") home = home.parent_path();
  return home.empty() ? std::filesystem::path("/") : home;
}

std::filesystem::path gvirtus_home() {
  const char* env = std::getenv("GVIRTUS_HOME");
  if (env != nullptr && *env != '\0') return env;
  // An address in this very file: inside the stub it resolves to the stub, in a program to it.
  return home_of_module_dir(module_dir(reinterpret_cast<const void*>(&home_of_module_dir)));
}

std::vector<std::filesystem::path> config_candidates(const std::filesystem::path& home) {
  std::vector<std::filesystem::path> out = {home / "etc" / "gvirtus" / "properties.json",
                                            home / "etc" / "properties.json"};
  // GNU install conventions: the prefix /usr keeps its configuration in /etc.
  if (home == "/usr") out.insert(out.begin(), "/etc/gvirtus/properties.json");
  return out;
}

std::vector<std::filesystem::path> plugin_dirs() {
  const auto home = gvirtus_home();
  std::vector<std::filesystem::path> out = {home / "lib" / "gvirtus"};
#ifdef GVIRTUS_INSTALL_LIBDIR
  // The configured libdir (e.g. lib/x86_64-linux-gnu) when it is not plain lib.
  if (std::filesystem::path(GVIRTUS_INSTALL_LIBDIR) != "lib")
    out.push_back(home / GVIRTUS_INSTALL_LIBDIR / "gvirtus");
#endif
  // Beside the program, for a backend run from a build tree with GVIRTUS_HOME elsewhere.
  out.push_back(executable_dir() / ".." / "lib" / "gvirtus");
  out.push_back(executable_dir() / ".." / "lib");
  return unique_normal(out);
}

std::vector<std::filesystem::path> stub_dirs() {
  const auto home = gvirtus_home();
  std::vector<std::filesystem::path> out = {home / "lib" / "gvirtus" / "stub"};
#ifdef GVIRTUS_INSTALL_LIBDIR
  if (std::filesystem::path(GVIRTUS_INSTALL_LIBDIR) != "lib")
    out.push_back(home / GVIRTUS_INSTALL_LIBDIR / "gvirtus" / "stub");
#endif
  out.push_back(home / "lib" / "stub");  // the build tree
  // Beside the program, when GVIRTUS_HOME names a prefix holding only a configuration.
  const auto exe = executable_dir();
  out.push_back(exe / ".." / "lib" / "gvirtus" / "stub");
  out.push_back(exe / ".." / "lib" / "stub");
  return unique_normal(out);
}

}  // namespace gvirtus

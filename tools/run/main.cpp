// gvirtus-run: runs an unmodified CUDA application through gvirtus.
//
//   gvirtus-run [--config FILE] -- ./app args...
//
// Puts the stub libcudart.so.13 first on LD_LIBRARY_PATH, points GVIRTUS_CONFIG at the
// configuration (if given, else leaves the usual lookup to the stub) and replaces itself with the
// application, which therefore keeps its pid, its stdio and its exit status.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "common/paths.h"

namespace {

int usage(const std::string& why) {
  if (!why.empty()) std::cerr << "gvirtus-run: " << why << "\n";
  std::cerr << "usage: gvirtus-run [--config FILE] -- PROGRAM [ARGS...]\n";
  return 2;
}

// Where the stub is: <prefix>/lib/gvirtus/stub (or the configured libdir's) for an installed
// gvirtus-run, lib/stub in the build tree; GVIRTUS_HOME, when set, names the prefix.
std::filesystem::path find_stub_dir() {
  for (const auto& dir : gvirtus::stub_dirs()) {
    if (std::filesystem::exists(dir / "libcudart.so.13")) return dir.lexically_normal();
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: gvirtus-run [--config FILE] -- PROGRAM [ARGS...]\n"
                   "Runs PROGRAM with gvirtus's libcudart.so.13 in place of NVIDIA's, so its\n"
                   "CUDA calls execute on the backend named by the configuration.\n";
      return 0;
    } else if (arg == "--config" && i + 1 < argc) {
      config = argv[++i];
    } else {
      return usage("unknown argument \"" + arg + "\"");
    }
  }
  if (i >= argc) return usage("no program given");

  const auto stub = find_stub_dir();
  if (stub.empty()) {
    std::string looked;
    for (const auto& dir : gvirtus::stub_dirs()) looked += " " + dir.lexically_normal().string();
    std::cerr << "gvirtus-run: the stub libcudart.so.13 is not installed (looked in" << looked
              << "); was gvirtus built without the CUDA toolkit?\n";
    return 1;
  }
  if (!config.empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(config, ec);
    if (ec || !std::filesystem::exists(absolute)) {
      std::cerr << "gvirtus-run: configuration file " << config << " does not exist\n";
      return 1;
    }
    ::setenv("GVIRTUS_CONFIG", absolute.c_str(), 1);
  }
  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string path =
      stub.string() + (old != nullptr && *old != '\0' ? ":" + std::string(old) : "");
  ::setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  ::execvp(argv[i], argv + i);
  std::cerr << "gvirtus-run: cannot run " << argv[i] << ": " << std::strerror(errno) << "\n";
  return 127;
}

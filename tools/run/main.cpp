// gvirtus-run: runs an unmodified CUDA application through gvirtus.
//
//   gvirtus-run [--mode runtime|driver] [--config FILE] -- ./app args...
//
// Puts a gvirtus stub first on LD_LIBRARY_PATH - in runtime mode (the default) libcudart.so.13,
// which serves programs built with -cudart shared, then the driver stub behind it for programs
// and libraries that bring NVIDIA's runtime; in driver mode libcuda.so.1 (stub/driver/) alone,
// on which NVIDIA's own runtimes, static or shared, and libraries run; in both, the NVML stub
// libnvidia-ml.so.1 (stub/nvml/) when it is installed - points GVIRTUS_CONFIG at
// the configuration (if given, else leaves the usual lookup to the stub) and replaces itself with
// the application, which therefore keeps its pid, its stdio and its exit status. In both modes it
// also preloads libgvirtus-device-node.so (stub/preload/, device_node.cpp): programs that look
// for NVIDIA's device node before they try CUDA (JAX) find /dev/nvidiactl.
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
  std::cerr << "usage: gvirtus-run [--mode runtime|driver] [--config FILE] -- PROGRAM [ARGS...]\n";
  return 2;
}

struct Mode {
  const char* subdir;   // under the stub directory
  const char* library;  // what the mode puts in place of NVIDIA's
};
constexpr Mode kRuntime{"", "libcudart.so.13"};
constexpr Mode kDriver{"driver", "libcuda.so.1"};
// NVML (stub/nvml/libnvidia-ml.so.1), in both modes: programs that ask NVML about their GPUs
// (PyTorch, JAX, monitoring tools) ask the backend's, through its nvml plugin (docs/nvml.md).
constexpr Mode kNvml{"nvml", "libnvidia-ml.so.1"};
// The device node's stand-in, preloaded after whatever the environment preloads already (a
// sanitizer's runtime must come first).
constexpr Mode kDeviceNode{"preload", "libgvirtus-device-node.so"};

// Where the mode's stub is: <prefix>/lib/gvirtus/stub (or the configured libdir's) for an
// installed gvirtus-run, lib/stub in the build tree; GVIRTUS_HOME, when set, names the prefix.
std::filesystem::path find_stub_dir(const Mode& mode) {
  for (const auto& dir : gvirtus::stub_dirs()) {
    if (std::filesystem::exists(dir / mode.subdir / mode.library)) {
      return (dir / mode.subdir).lexically_normal();
    }
  }
  return {};
}

// What LD_PRELOAD becomes: what the environment preloads, then the device node's stand-in. In a
// sanitized build (the test suite's), a process that loads instrumented libraries must have the
// sanitizer's runtime first: the stand-in (instrumented too) goes only after an environment that
// preloads the runtime, and is left out otherwise, as an instrumented program has the runtime
// linked first and nothing may be preloaded ahead of it.
std::string preload_with(const std::string& shim) {
  const char* preloaded = std::getenv("LD_PRELOAD");
  const std::string preload = preloaded != nullptr ? preloaded : "";
#if defined(__SANITIZE_ADDRESS__)
  if (preload.find("libasan.so") == std::string::npos) return preload;
#endif
  return preload.empty() ? shim : preload + ":" + shim;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  Mode mode = kRuntime;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    } else if (arg == "--help" || arg == "-h") {
      std::cout
          << "usage: gvirtus-run [--mode runtime|driver] [--config FILE] -- PROGRAM [ARGS...]\n"
             "Runs PROGRAM with a gvirtus stub in place of NVIDIA's library, so its CUDA\n"
             "calls execute on the backend named by the configuration.\n"
             "  --mode runtime  libcudart.so.13 (the default): programs built with\n"
             "                  -cudart shared; a program that brings NVIDIA's runtime\n"
             "                  (a static build, PyTorch, CuPy) runs on libcuda.so.1\n"
             "  --mode driver   libcuda.so.1: NVIDIA's own runtime (static or shared,\n"
             "                  CUDA 12 or 13) and libraries run on it; JAX needs it\n"
             "In both modes NVML (libnvidia-ml.so.1) is gvirtus's too: the backend's\n"
             "configuration names the nvml plugin to serve it. And programs that look for\n"
             "NVIDIA's device node /dev/nvidiactl before they try CUDA (JAX) find it.\n";
      return 0;
    } else if (arg == "--mode" && i + 1 < argc) {
      const std::string name = argv[++i];
      if (name == "runtime") {
        mode = kRuntime;
      } else if (name == "driver") {
        mode = kDriver;
      } else {
        return usage("unknown mode \"" + name + "\" (runtime or driver)");
      }
    } else if (arg == "--config" && i + 1 < argc) {
      config = argv[++i];
    } else {
      return usage("unknown argument \"" + arg + "\"");
    }
  }
  if (i >= argc) return usage("no program given");

  const auto stub = find_stub_dir(mode);
  if (stub.empty()) {
    std::string looked;
    for (const auto& dir : gvirtus::stub_dirs()) {
      looked += " " + (dir / mode.subdir).lexically_normal().string();
    }
    std::cerr << "gvirtus-run: the stub " << mode.library << " is not installed (looked in"
              << looked << "); was gvirtus built without the CUDA toolkit?\n";
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
  std::string path = stub.string();
  // Runtime mode: a program that brings NVIDIA's runtime (a static build, a CUDA 12 one, a wheel
  // that loads its own by path) runs on the driver stub behind it - in effect driver mode.
  if (std::strcmp(mode.library, kRuntime.library) == 0) {
    if (const auto driver = find_stub_dir(kDriver); !driver.empty()) path += ":" + driver.string();
  }
  if (const auto nvml = find_stub_dir(kNvml); !nvml.empty()) path += ":" + nvml.string();
  if (old != nullptr && *old != '\0') path += ":" + std::string(old);
  ::setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  if (const auto node = find_stub_dir(kDeviceNode); !node.empty()) {
    if (const std::string preload = preload_with((node / kDeviceNode.library).string());
        !preload.empty()) {
      ::setenv("LD_PRELOAD", preload.c_str(), 1);
    }
  }
  ::execvp(argv[i], argv + i);
  std::cerr << "gvirtus-run: cannot run " << argv[i] << ": " << std::strerror(errno) << "\n";
  return 127;
}

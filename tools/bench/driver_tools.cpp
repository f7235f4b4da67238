#include "driver_tools.h"

#include <dlfcn.h>

#include <filesystem>

#include "common/paths.h"

namespace gvirtus::bench {

DriverTools find_driver_tools(const std::string& name) {
  DriverTools t;
  const std::filesystem::path probe = executable_dir() / name;
  if (!std::filesystem::exists(probe)) {
    t.missing = name + " is not built (no CUDA toolkit)";
    return t;
  }
  t.probe = probe.string();
  for (const auto& dir : stub_dirs()) {
    if (std::filesystem::exists(dir / "driver" / "libcuda.so.1")) {
      t.stub_dir = (dir / "driver").lexically_normal().string();
      break;
    }
  }
  if (t.stub_dir.empty()) t.missing = "gvirtus's libcuda.so.1 is not installed";
  // On a machine with NVIDIA's driver the program runs on the GPU; without, on the simulated
  // device, and says so.
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(driver);
    t.plugins = R"(["cuda"])";
    t.device = "gpu";
  } else {
    t.plugins = R"(["cuda-simulated"])";
    t.device = "simulated";
  }
  return t;
}

}  // namespace gvirtus::bench

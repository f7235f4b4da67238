// What the modes that run a program on gvirtus's libcuda.so.1 need (calls' driver row, pool):
// the program beside gvirtus-bench, the driver stub's directory, and the backend plugin to serve
// it - the driver on a machine with NVIDIA's driver, else the simulated device, which the results
// then name.
#pragma once

#include <string>

namespace gvirtus::bench {

struct DriverTools {
  std::string probe;     // the program's path
  std::string stub_dir;  // the directory of gvirtus's libcuda.so.1
  std::string plugins;   // R"(["cuda"])" or R"(["cuda-simulated"])"
  std::string device;    // "gpu" or "simulated"
  std::string missing;   // why the program cannot run here; empty when it can
};

// For the program `name` (gvirtus-bench-driver, gvirtus-bench-peer) beside this tool.
DriverTools find_driver_tools(const std::string& name);

}  // namespace gvirtus::bench

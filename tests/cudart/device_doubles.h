// A backend for the cudart tests without a GPU: the runtime's plugin on test doubles of a device
// preloaded into gvirtus-backend - the accepting device in "keep" mode (its memory is host memory:
// bench/copy/accepting_device.cpp), after any double of the test's own that comes first in
// `preload` (GVIRTUS_*_PRELOAD, which ends with the accepting device). Never GPU evidence.
#pragma once

#include <string>
#include <vector>

#include "support/backend_process.h"

namespace gvirtus::testing {

// `environment`: more "NAME=VALUE" entries for the backend.
inline BackendOptions runtime_on_device_doubles(TestTransport transport, const char* preload,
                                                const std::vector<std::string>& environment = {}) {
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.transport = transport;
  options.exec_prefix = {"env", std::string("LD_PRELOAD=") + preload,
                         "GVIRTUS_ACCEPTING_DEVICE=keep"};
  options.exec_prefix.insert(options.exec_prefix.end(), environment.begin(), environment.end());
  return options;
}

}  // namespace gvirtus::testing

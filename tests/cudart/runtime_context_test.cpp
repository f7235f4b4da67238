// The runtime's current context as the driver API sees it in runtime mode
// (programs/runtime_context_check.cpp through gvirtus-run): the runtime stub tells the driver stub
// of the context NVIDIA's runtime makes current on a thread (frontend_abi.h's
// gvirtus_runtime_context), and the driver stub makes it current there. The backend serves the
// runtime on the accepting device (bench/copy/accepting_device.cpp, whose runtime initialises) and
// the driver on the simulated device: not GPU evidence.
#include <gtest/gtest.h>

#include <string>

#include "device_doubles.h"
#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

TEST(RuntimeContext, is_the_driver_apis_current_context_on_each_thread_the_runtime_made_it_on) {
  BackendOptions options =
      runtime_on_device_doubles(TestTransport::tcp, GVIRTUS_ACCEPTING_DEVICE_PRELOAD);
  options.plugins = R"(["cudart", "cuda-simulated"])";
  BackendProcess backend(options);
  const auto [out, status] =
      run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " GVIRTUS_RUNTIME_CONTEXT_CHECK);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("runtime context: ok"), std::string::npos) << out;
}

}  // namespace
}  // namespace gvirtus::testing

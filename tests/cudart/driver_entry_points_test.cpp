// cudaGetDriverEntryPoint(ByVersion) in runtime mode (programs/entry_point_check.cpp through
// gvirtus-run): the runtime stub hands out the driver stub's own functions, found beside it. The
// backend runs the accepting device (bench/copy/accepting_device.cpp), whose runtime initialises,
// so the lookup itself runs here without a GPU; not GPU evidence (no driver call is made).
#include <gtest/gtest.h>
#include <string>

#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

TEST(DriverEntryPoints, are_the_driver_stubs_own_functions_and_unknown_names_are_null) {
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_ACCEPTING_DEVICE_PRELOAD,
                         "GVIRTUS_ACCEPTING_DEVICE=drop"};
  BackendProcess backend(options);
  const auto [out, status] =
      run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " GVIRTUS_ENTRY_POINT_CHECK);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("entry points: ok"), std::string::npos) << out;
  // Both functions come from gvirtus's driver stub, installed beside the runtime stub.
  EXPECT_NE(out.find("cuDriverGetVersion from " GVIRTUS_DRIVER_STUB), std::string::npos) << out;
  EXPECT_NE(out.find("cuMemAlloc from " GVIRTUS_DRIVER_STUB), std::string::npos) << out;
}

}  // namespace
}  // namespace gvirtus::testing

// Host functions and user objects through the runtime stub, end to end on a machine without a
// GPU: the application (programs/host_function_check.cpp) runs through gvirtus-run against a
// backend with the accepting device (bench/copy/accepting_device.cpp), whose streams run host
// functions as they are enqueued, so every host function passes through the backend's gate and
// the session's callback thread. Not GPU evidence: it checks the channel, not a GPU's streams.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include <string>

#include "device_doubles.h"
#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

class HostFunctions : public ::testing::TestWithParam<TestTransport> {};

TEST_P(HostFunctions, run_on_the_client_in_stream_order_and_destructors_run_once) {
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.transport = GetParam();
  options.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_ACCEPTING_DEVICE_PRELOAD};
  BackendProcess backend(options);
  const auto [out, status] =
      run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " + GVIRTUS_HOST_FUNCTION_CHECK);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
}

// The runtime's error log (programs/logs_check.cpp): callbacks on the client for messages the
// backend's runtime logged, dumps to memory and to a file (the accepting device logs an invalid
// cudaSetDevice); and a device's over-budget notification.
TEST_P(HostFunctions, log_callbacks_run_on_the_client_and_dumps_come_back) {
  // "keep": one device, so cudaSetDevice(5) fails.
  BackendProcess backend(runtime_on_device_doubles(GetParam(), GVIRTUS_ACCEPTING_DEVICE_PRELOAD,
                                                   {"GVIRTUS_ACCEPTING_MEMORY_BUDGET=1048576"}));
  const std::string file = ::testing::TempDir() + "/gvirtus-runtime-logs-" +
                           std::to_string(::getpid()) + std::string(to_string(GetParam()));
  const auto [out, status] =
      run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " + GVIRTUS_LOGS_CHECK + " " + file);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("logs: ok"), std::string::npos) << out;
  std::remove(file.c_str());
}

INSTANTIATE_TEST_SUITE_P(Transports, HostFunctions,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing

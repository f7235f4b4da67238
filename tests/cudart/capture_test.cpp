// What reaches the backend while a stream captures (frontend/graphs.cpp): the application is
// programs/capture_check.cpp, run through gvirtus-run; the backend runs with the capturing device
// (programs/capture_device.cpp, a double that keeps capture states and logs what a capturing
// stream receives) before the accepting device. Not GPU evidence: it checks the stub's choices.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

class Capture : public ::testing::TestWithParam<TestTransport> {};

TEST_P(Capture, copies_of_client_memory_are_refused_and_device_copies_captured) {
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.transport = GetParam();
  options.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_CAPTURE_DEVICE_PRELOAD};
  BackendProcess backend(options);
  const auto [out, status] =
      run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " + GVIRTUS_CAPTURE_CHECK);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
  const std::string log = backend.log();
  // Both device-to-device copies reached the backend's capture; no copy of client memory did:
  // the stub had the runtime wait for the stream instead, once refused, then invalidated.
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
    return n;
  };
  const std::string device_to_device =
      "cudaMemcpyAsync captured, kind " + std::to_string(cudaMemcpyDeviceToDevice);
  EXPECT_EQ(count(device_to_device), 2u) << log;
  EXPECT_EQ(count("cudaMemcpyAsync captured"), 2u) << log;
  EXPECT_EQ(count("cudaStreamSynchronize refused in a capture"), 1u) << log;
  EXPECT_EQ(count("cudaStreamSynchronize of an invalidated capture"), 1u) << log;
}

// Copy nodes of a graph run each time the graph does, on the backend's GPU: one that names the
// client's own memory is refused by the stub (programs/graph_copy_check.cpp), and never reaches
// the backend; a device-to-device one does (the accepting device's runtime initialises).
TEST_P(Capture, copy_nodes_of_client_memory_are_refused_before_the_backend) {
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.transport = GetParam();
  options.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_ACCEPTING_DEVICE_PRELOAD};
  BackendProcess backend(options);
  const auto [out, status] = run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                                        backend.client_config_file() + " -- " +
                                        GVIRTUS_GRAPH_COPY_CHECK + " " + to_string(GetParam()));
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
  EXPECT_NE(out.find("cannot reach when the graph runs"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Transports, Capture,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing

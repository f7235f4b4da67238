// What reaches the backend while a stream captures (frontend/graphs.cpp) and when a graph's copy
// node names the client's memory (frontend/host_staging.h): the applications are
// programs/capture_check.cpp and graph_copy_check.cpp, run through gvirtus-run; the backend runs
// with the capturing device (programs/capture_device.cpp, a double that keeps capture states,
// logs what a capturing stream receives, and builds and launches graphs of copies and host
// functions) before the accepting device, which keeps what is copied. Not GPU evidence: it checks
// the stub's choices and that the staged bytes arrive.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "device_doubles.h"
#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

class Capture : public ::testing::TestWithParam<TestTransport> {};

TEST_P(Capture, copies_of_client_memory_are_staged_and_device_copies_captured) {
  BackendProcess backend(runtime_on_device_doubles(GetParam(), GVIRTUS_CAPTURE_DEVICE_PRELOAD));
  const auto [out, status] =
      run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " + GVIRTUS_CAPTURE_CHECK);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
  const std::string log = backend.log();
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
    return n;
  };
  // The captures took the program's copies between device memory and its host function; its
  // copies of pageable memory became nodes of the capture's graph (a staged copy each, the stub's
  // host function and a copy of a staging block), never copies of the stream.
  const std::string device_to_device =
      "cudaMemcpyAsync captured, kind " + std::to_string(cudaMemcpyDeviceToDevice);
  EXPECT_EQ(count(device_to_device), 2u) << log;
  EXPECT_EQ(count("cudaMemcpyAsync captured"), 2u) << log;
  EXPECT_EQ(count("cudaLaunchHostFunc captured"), 1u) << log;
  // The copies between host memory were nodes too, never the stream's; the program's wait for a
  // capturing stream was refused, and so was the 1D array copy (the stub had the runtime wait).
  EXPECT_EQ(count("cudaStreamSynchronize refused in a capture"), 2u) << log;
  // The side stream joined the fifth capture; its copies of pageable memory were staged, as the
  // count of captured copies above says (none of them reached the stream).
  EXPECT_EQ(count("a stream joined a capture"), 1u) << log;
}

// Copy nodes of a graph run each time the graph does, on the backend's GPU: one that names the
// client's own memory is staged (programs/graph_copy_check.cpp), built and launched here by the
// capturing device; one between host memory is the stub's host function alone, copying here.
TEST_P(Capture, copy_nodes_of_client_memory_are_staged) {
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.transport = GetParam();
  options.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_CAPTURE_DEVICE_PRELOAD,
                         "GVIRTUS_ACCEPTING_DEVICE=keep"};
  BackendProcess backend(options);
  const auto [out, status] = run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                                        backend.client_config_file() + " -- " +
                                        GVIRTUS_GRAPH_COPY_CHECK + " " + to_string(GetParam()));
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
  EXPECT_NE(out.find("keeps that memory on the sides it was on"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Transports, Capture,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing

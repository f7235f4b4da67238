// What kernels print reaches the application through the runtime stub, in order with the
// application's own lines (backend/output_relay.h): a real program run through gvirtus-run, the
// backend's cudart plugin on the printing device (programs/printing_device.cpp, which prints at
// each synchronisation as the CUDA driver flushes the device's printf buffer) before the
// accepting device. Not GPU evidence: it checks the path, over tcp and shm.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "device_doubles.h"
#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

class KernelOutput : public ::testing::TestWithParam<TestTransport> {};

TEST_P(KernelOutput, reaches_the_programs_stdout_and_stderr_in_the_order_it_was_made) {
  BackendProcess backend(runtime_on_device_doubles(GetParam(), GVIRTUS_PRINTING_DEVICE_PRELOAD));
  const std::string errors = ::testing::TempDir() + "kernel_output_stderr.txt";
  const RunResult result =
      run(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " + backend.client_config_file() +
          " -- " + GVIRTUS_OUTPUT_CHECK + " 2>" + errors);
  EXPECT_EQ(exit_code(result.status), 0) << result.output << "\nbackend log:\n" << backend.log();
  // stdout is a pipe here, so the program's stdio holds its own lines until it exits: the
  // device's lines must have taken their places among them, not come before them all.
  EXPECT_EQ(result.output,
            "before the first synchronisation\n"
            "kernel printf at synchronisation 1\n"
            "between\n"
            "kernel printf at stream synchronisation 2\n"
            "between again\n"
            "kernel printf at synchronisation 3\n"
            "after\n")
      << "backend log:\n"
      << backend.log();
  std::ifstream in(errors);
  std::stringstream stderr_text;
  stderr_text << in.rdbuf();
  // The assertion of the third synchronisation, before the line the program wrote after it.
  const size_t assertion =
      stderr_text.str().find("kernel.cu:7: void check(): Assertion `ok` failed.\n");
  const size_t own = stderr_text.str().find("the application's own error line\n");
  EXPECT_NE(assertion, std::string::npos) << stderr_text.str();
  EXPECT_NE(own, std::string::npos) << stderr_text.str();
  EXPECT_LT(assertion, own) << stderr_text.str();
  EXPECT_EQ(backend.log().find("kernel printf"), std::string::npos) << backend.log();
}

INSTANTIATE_TEST_SUITE_P(Transports, KernelOutput,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing

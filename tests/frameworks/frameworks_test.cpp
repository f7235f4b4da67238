// Frameworks on the simulated device (issue 20): PyTorch, installed by scripts/lib.sh into the
// build tree, runs bench/frameworks/torch_smoke.py --simulated (the script the GPU runs compare
// with native) on gvirtus's libcuda.so.1 against a backend whose cuda
// plugin is the simulated device (never GPU evidence: docs/driver.md). The test asserts what
// reached the backend - the kernels of each step, recorded - and that every step returned; the
// values are the simulated device's, which computes nothing.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool has_torch() {
  return ::access((std::string(GVIRTUS_TORCH_DIR) + "/torch/__init__.py").c_str(), R_OK) == 0;
}

TEST(Frameworks, torch_runs_its_first_steps_on_the_simulated_device) {
  if (!has_torch()) {
    GTEST_SKIP() << "no PyTorch in " << GVIRTUS_TORCH_DIR
                 << " (scripts/test.sh installs it: scripts/lib.sh's install_torch)";
  }
  const std::string launches =
      ::testing::TempDir() + "/gvirtus-torch-launches-" + std::to_string(::getpid()) + ".jsonl";
  ::setenv("GVIRTUS_SIMULATED_LAUNCHES", launches.c_str(), 1);  // the backend inherits it
  BackendOptions options;
  options.plugins = R"(["cuda-simulated"])";
  options.transport = TestTransport::shm;
  BackendProcess backend(options);
  ::unsetenv("GVIRTUS_SIMULATED_LAUNCHES");
  const RunResult result =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " PYTHONPATH=" GVIRTUS_TORCH_DIR " GVIRTUS_CONFIG=" +
          backend.client_config_file() +
          " LD_LIBRARY_PATH=" GVIRTUS_DRIVER_STUB_DIR " python3 " GVIRTUS_TORCH_SCRIPT
          " --simulated 2>&1");
  for (const char* line :
       {"cuda available: True", "devices: 1", "elementwise: returned", "matmul fp32: returned",
        "matmul bf16: returned", "mlp step 3: returned", "done"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  EXPECT_EQ(result.status, 0) << result.output << backend.log();
  // What reached the backend: PyTorch's elementwise and reduction kernels, cuBLAS's GEMMs.
  const std::string recorded = read_all(launches);
  std::remove(launches.c_str());
  for (const char* kernel : {"elementwise_kernel", "reduce_kernel", "gemm"}) {
    EXPECT_NE(recorded.find(kernel), std::string::npos) << kernel << " never launched\n"
                                                        << recorded.substr(0, 4000);
  }
}

}  // namespace
}  // namespace gvirtus::testing

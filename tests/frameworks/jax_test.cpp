// JAX on the simulated device (issue 20): JAX 0.10 with its CUDA 13 plugin, installed by
// scripts/lib.sh into the build tree, runs bench/frameworks/jax_smoke.py --simulated through
// gvirtus-run in driver mode, unmodified: gvirtus-run's preload gives it the /dev/nvidiactl it
// looks for before it tries CUDA, the NVML stub counts the backend's devices for XLA, and XLA
// compiles its kernels on the client (LLVM, ptxas) and loads them, with NVIDIA's cuBLAS, on
// gvirtus's libcuda.so.1. The tests assert what reached the backend - XLA's fusions and its GEMMs,
// recorded
// - and that every step returned; the simulated device computes nothing (never GPU evidence).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "framework_support.h"
#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

std::string missing_jax() {
  return missing("JAX", GVIRTUS_JAX_DIR, "jax");
}

// JAX loads each NVIDIA library from the first nvidia/cu13 on its path: PyTorch's, which has them
// all; ptxas comes from the nvcc wheels after it (scripts/lib.sh: install_jax).
constexpr char kJaxPath[] = GVIRTUS_JAX_DIR ":" GVIRTUS_TORCH_DIR ":" GVIRTUS_JAX_DIR "/cuda-nvcc";

// The smoke script through gvirtus-run in driver mode against `backend`, with `env` ("NAME=VALUE
// ...") for it.
RunResult run_jax(const BackendProcess& backend, const std::string& env = "") {
  return run_under_gvirtus(kJaxPath, backend, GVIRTUS_JAX_SCRIPT " --simulated 2>&1", env,
                           "--mode driver");
}

void expect_every_step(const RunResult& result, const BackendProcess& backend) {
  for (const char* line : {"devices: 1", "platform: gpu", "compute capability: 9.0",
                           "elementwise jit: returned", "matmul jit: returned", "done"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  EXPECT_EQ(result.status, 0) << result.output << backend.log();
}

// jax.devices() shows the backend's device, and XLA's kernels reach it: the elementwise function
// fused (loop_..._fusion), the matmul as XLA's own GEMM fusion, which XLA times against cuBLAS's
// kernels while it tunes (cuBLASLt's and CUTLASS's, launched by NVIDIA's library).
TEST(Frameworks, jax_runs_its_first_steps_on_the_simulated_device) {
  if (const std::string why = missing_jax(); !why.empty()) GTEST_SKIP() << why;
  const std::string launches = launches_file("jax");
  const auto backend = simulated_backend(launches, TestTransport::shm, /*with_nvml=*/true);
  const RunResult result = run_jax(*backend);
  expect_every_step(result, *backend);
  const std::string recorded = read_all(launches);
  std::remove(launches.c_str());
  for (const char* kernel : {"loop_add_fusion", "gemm_fusion_dot_general", "cublasLt", "cutlass"}) {
    EXPECT_NE(recorded.find(kernel), std::string::npos) << kernel << " never launched\n"
                                                        << recorded.substr(0, 4000);
  }
}

// Over tcp the backend's GPU cannot reach this machine's memory, and XLA's autotuner makes the GPU
// wait on a flag in page-locked host memory (its delay kernel): with autotuning off, as
// docs/driver.md tells, JAX runs over tcp too.
TEST(Frameworks, jax_runs_over_tcp_with_autotuning_off) {
  if (const std::string why = missing_jax(); !why.empty()) GTEST_SKIP() << why;
  const std::string launches = launches_file("jax-tcp");
  const auto backend = simulated_backend(launches, TestTransport::tcp, /*with_nvml=*/true);
  const RunResult result = run_jax(*backend, "XLA_FLAGS=--xla_gpu_autotune_level=0");
  expect_every_step(result, *backend);
  const std::string recorded = read_all(launches);
  std::remove(launches.c_str());
  EXPECT_NE(recorded.find("gemm_fusion_dot_general"), std::string::npos) << recorded;
  EXPECT_EQ(recorded.find("DelayKernel"), std::string::npos) << "no autotuning, no delay kernel";
}

// Without gvirtus-run's preload, on a machine without NVIDIA's device node, JAX never tries CUDA:
// it runs on the CPU. What the preload is for.
TEST(Frameworks, jax_without_the_device_node_runs_on_the_cpu) {
  if (const std::string why = missing_jax(); !why.empty()) GTEST_SKIP() << why;
  if (::access("/dev/nvidiactl", F_OK) == 0) GTEST_SKIP() << "this machine has /dev/nvidiactl";
  const auto backend = simulated_backend(launches_file("jax-cpu"), TestTransport::shm, true);
  const RunResult result =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " PYTHONPATH=" + std::string(kJaxPath) +
          " GVIRTUS_CONFIG=" + backend->client_config_file() +
          " LD_LIBRARY_PATH=" GVIRTUS_DRIVER_STUB_DIR ":" GVIRTUS_NVML_STUB_DIR
          " python3 -c 'import jax; print(jax.devices()[0].platform)' 2>/dev/null");
  EXPECT_EQ(result.output, "cpu\n");
  EXPECT_EQ(result.status, 0);
}

}  // namespace
}  // namespace gvirtus::testing

// Frameworks on the simulated device (issue 20): PyTorch and CuPy, installed by scripts/lib.sh into
// the build tree, run bench/frameworks/{torch,cupy}_smoke.py --simulated (the scripts the GPU runs
// compare with native) on gvirtus's libcuda.so.1 against a backend whose cuda plugin is the
// simulated device (never GPU evidence: docs/driver.md). The tests assert what reached the
// backend - the kernels of each step, recorded - and that every step returned; the values are the
// simulated device's, which computes nothing. And against a backend on a machine without a
// driver, PyTorch answers whether CUDA is there exactly as it does natively without one.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "common/json.h"
#include "framework_support.h"
#include "plugins/cuda/simulated/identity.h"
#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

std::string missing_torch() {
  return missing("PyTorch", GVIRTUS_TORCH_DIR, "torch");
}
std::string missing_cupy() {
  return missing("CuPy", GVIRTUS_CUPY_DIR, "cupy");
}

// `python3 ARGS` with the framework in `packages`, on gvirtus's libcuda.so.1 against `backend`;
// `env` adds variables ("NAME=VALUE ...").
RunResult run_python(const char* packages, const BackendProcess& backend, const std::string& args,
                     const std::string& env = "") {
  return run("env " GVIRTUS_STUB_PROGRAM_ENV " PYTHONPATH=" + std::string(packages) + " " + env +
             " GVIRTUS_CONFIG=" + backend.client_config_file() +
             " LD_LIBRARY_PATH=" GVIRTUS_DRIVER_STUB_DIR " python3 " + args);
}

TEST(Frameworks, torch_runs_its_first_steps_on_the_simulated_device) {
  if (const std::string why = missing_torch(); !why.empty()) GTEST_SKIP() << why;
  const std::string launches = launches_file("torch");
  const auto backend = simulated_backend(launches);
  const RunResult result =
      run_python(GVIRTUS_TORCH_DIR, *backend, GVIRTUS_TORCH_SCRIPT " --simulated 2>&1");
  for (const char* line : {"cuda available: True", "devices: 1", "elementwise: returned",
                           "matmul fp32: returned", "matmul bf16: returned", "conv2d: returned",
                           "graph replay: returned", "mlp step 3: returned", "done"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  EXPECT_EQ(result.status, 0) << result.output << backend->log();
  // What reached the backend: PyTorch's elementwise and reduction kernels, cuBLAS's GEMMs,
  // cuDNN's convolution, and the graph's kernels launched again by each replay.
  const std::string recorded = read_all(launches);
  std::remove(launches.c_str());
  for (const char* kernel :
       {"elementwise_kernel", "reduce_kernel", "gemm", "fprop", "\"graph\":true"}) {
    EXPECT_NE(recorded.find(kernel), std::string::npos) << kernel << " never launched\n"
                                                        << recorded.substr(0, 4000);
  }
}

// A backend with two simulated devices and the simulated NVML, and PyTorch's Python run against
// it with gvirtus's libcuda.so.1 and libnvidia-ml.so.1 (`env`: more variables for it).
RunResult run_torch_with_nvml(const std::string& script, const std::string& env = "") {
  BackendOptions options;
  options.plugins = R"(["cuda-simulated", "nvml-simulated"])";
  options.env = {"GVIRTUS_SIMULATED_DEVICES=2"};
  const BackendProcess backend(options);
  const std::string path = launches_file("nvml") + ".py";
  std::ofstream(path) << script;
  RunResult result =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " PYTHONPATH=" GVIRTUS_TORCH_DIR " " + env +
          " GVIRTUS_CONFIG=" + backend.client_config_file() +
          " LD_LIBRARY_PATH=" GVIRTUS_DRIVER_STUB_DIR ":" GVIRTUS_NVML_STUB_DIR " python3 " + path +
          " 2>&1");
  std::remove(path.c_str());
  if (result.status != 0) result.output += "\nbackend log:\n" + backend.log();
  return result;
}

// PyTorch asks NVML which GPUs there are (PYTORCH_NVML_BASED_CUDA_CHECK=1, and to read UUIDs in
// CUDA_VISIBLE_DEVICES): through gvirtus's libnvidia-ml.so.1 it sees the backend's two simulated
// devices (the nvml-simulated plugin), by count and by UUID, and a UUID selection counts one.
TEST(Frameworks, torch_finds_the_backends_gpus_through_nvml) {
  if (const std::string why = missing_torch(); !why.empty()) GTEST_SKIP() << why;
  const RunResult result = run_torch_with_nvml(
      "import torch\n"
      "print('nvml count:', torch.cuda._device_count_nvml())\n"
      "print('nvml uuids:', ','.join(torch.cuda._raw_device_uuid_nvml()))\n",
      "CUDA_VISIBLE_DEVICES=GPU-67766972-7475-732d-7369-6d756c617466");
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("nvml count: 1\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("nvml uuids: GPU-67766972-7475-732d-7369-6d756c617465,"
                               "GPU-67766972-7475-732d-7369-6d756c617466\n"),
            std::string::npos)
      << result.output;
}

// PyTorch's device statistics (torch.cuda.utilization(), memory_usage(), clock_rate(),
// temperature()) go through NVIDIA's Python bindings (pynvml) to libnvidia-ml.so.1: gvirtus's,
// answering from the backend's simulated NVML - idle devices, the simulated SM clock, and no
// temperature sensor, which NVML reports as not supported, as on a GPU without one.
TEST(Frameworks, torch_reads_device_statistics_through_pynvml) {
  if (const std::string why = missing_torch(); !why.empty()) GTEST_SKIP() << why;
  const RunResult result = run_torch_with_nvml(
      "import torch, pynvml\n"
      "print('utilization:', torch.cuda.utilization(1))\n"
      "print('memory usage:', torch.cuda.memory_usage(0))\n"
      "print('clock:', torch.cuda.clock_rate(0))\n"
      "try:\n"
      "    torch.cuda.temperature(0)\n"
      "except pynvml.NVMLError_NotSupported:\n"
      "    print('temperature: not supported')\n");
  EXPECT_EQ(result.status, 0) << result.output;
  const std::string expected[] = {"utilization: 0\n", "memory usage: 0\n",
                                  "clock: " + std::to_string(gvirtus::simulated::kClockMhz) + "\n",
                                  "temperature: not supported\n"};
  for (const std::string& line : expected) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << result.output;
  }
}

// gvirtus-run's default mode (runtime) puts the driver stub behind the runtime stub: PyTorch, which
// loads NVIDIA's runtime from its wheels, runs on gvirtus's libcuda.so.1 there as in driver mode.
TEST(Frameworks, torch_runs_under_gvirtus_run_in_its_default_mode) {
  if (const std::string why = missing_torch(); !why.empty()) GTEST_SKIP() << why;
  const std::string launches = launches_file("torch-default-mode");
  const auto backend = simulated_backend(launches);
  const RunResult result = run_under_gvirtus(
      GVIRTUS_TORCH_DIR, *backend,
      "-c 'import torch; print(torch.cuda.is_available(), torch.cuda.device_count(),"
      " (torch.ones(4, device=\"cuda\") + 1).device)' 2>/dev/null");
  EXPECT_EQ(result.output, "True 1 cuda:0\n") << backend->log();
  EXPECT_EQ(result.status, 0);
  const std::string recorded = read_all(launches);
  std::remove(launches.c_str());
  EXPECT_NE(recorded.find("elementwise"), std::string::npos) << recorded.substr(0, 2000);
}

// CuPy too, which links NVIDIA's runtime statically, under gvirtus-run's default mode.
TEST(Frameworks, cupy_runs_under_gvirtus_run_in_its_default_mode) {
  if (const std::string why = missing_cupy(); !why.empty()) GTEST_SKIP() << why;
  const std::string launches = launches_file("cupy-default-mode");
  const auto backend = simulated_backend(launches);
  const std::string kernel_cache = launches + ".cupy-cache";
  const RunResult result =
      run_under_gvirtus(GVIRTUS_CUPY_DIR, *backend, GVIRTUS_CUPY_SCRIPT " --simulated 2>/dev/null",
                        "CUPY_CACHE_DIR=" + kernel_cache);
  std::filesystem::remove_all(kernel_cache);
  EXPECT_NE(result.output.find("arange sum: returned"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("done"), std::string::npos) << result.output;
  EXPECT_EQ(result.status, 0);
  const std::string recorded = read_all(launches);
  std::remove(launches.c_str());
  EXPECT_NE(recorded.find("cupy_arange"), std::string::npos) << recorded.substr(0, 2000);
}

// CuPy links NVIDIA's runtime statically and calls the driver: cupy.arange(10).sum() (CuPy's
// kernels, compiled by the toolkit's NVRTC on the client, and CUB's reduction), a custom
// ElementwiseKernel and a matmul (cuBLAS) reach the backend.
TEST(Frameworks, cupy_runs_its_first_steps_on_the_simulated_device) {
  if (const std::string why = missing_cupy(); !why.empty()) GTEST_SKIP() << why;
  const std::string launches = launches_file("cupy");
  const auto backend = simulated_backend(launches);
  // CuPy keeps the kernels it compiled in a cache of its own: an empty one, so they are compiled.
  const std::string kernel_cache = launches + ".cupy-cache";
  const RunResult result =
      run_python(GVIRTUS_CUPY_DIR, *backend, GVIRTUS_CUPY_SCRIPT " --simulated 2>&1",
                 "CUPY_CACHE_DIR=" + kernel_cache);
  for (const char* line : {"devices: 1", "arange sum: returned", "elementwise kernel: returned",
                           "matmul: returned", "done"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  EXPECT_EQ(result.status, 0) << result.output << backend->log();
  const std::string recorded = read_all(launches);
  std::remove(launches.c_str());
  std::filesystem::remove_all(kernel_cache);
  for (const char* kernel : {"cupy_arange", "DeviceReduce", "gvirtus_axpy", "gemm"}) {
    EXPECT_NE(recorded.find(kernel), std::string::npos) << kernel << " never launched\n"
                                                        << recorded.substr(0, 4000);
  }
}

// The workload `gvirtus-bench frameworks` runs (bench/frameworks/torch_workload.py) goes through
// every step on the simulated device and prints its one JSON object with every figure (the
// figures themselves mean nothing there).
TEST(Frameworks, the_torch_workload_of_the_bench_reports_every_figure) {
  if (const std::string why = missing_torch(); !why.empty()) GTEST_SKIP() << why;
  const std::string launches = launches_file("torch-workload");
  const auto backend = simulated_backend(launches);
  const RunResult result =
      run_python(GVIRTUS_TORCH_DIR, *backend, GVIRTUS_TORCH_WORKLOAD " --simulated 2>/dev/null");
  std::remove(launches.c_str());
  ASSERT_EQ(result.status, 0) << result.output;
  const JsonValue report = parse_json(result.output, "torch_workload's output");
  for (const char* figure : {"first_tensor_s", "matmul_ms", "mlp_step_ms"}) {
    const JsonValue* value = report.find(figure);
    ASSERT_NE(value, nullptr) << figure << "\n" << result.output;
    EXPECT_TRUE(value->is_number()) << figure;
  }
  ASSERT_NE(report.find("mlp_losses"), nullptr) << result.output;
  EXPECT_EQ(report.find("mlp_losses")->size(), 3u) << "--simulated: three steps";
  ASSERT_NE(report.find("device"), nullptr);
  EXPECT_NE(report.find("device")->as_string().find("simulated"), std::string::npos);
}

// Against a backend whose machine has no driver (the cuda plugin, refused there), PyTorch says
// CUDA is not available and counts no device, exactly as natively without a driver.
TEST(Frameworks, torch_without_a_driver_answers_as_it_does_natively) {
  if (const std::string why = missing_torch(); !why.empty()) GTEST_SKIP() << why;
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(driver);
    GTEST_SKIP() << "this machine has NVIDIA's libcuda.so.1: the comparison needs one without";
  }
  BackendProcess backend("", R"(["cuda"])");
  const std::string script =
      "-c 'import torch; print(torch.cuda.is_available(), torch.cuda.device_count())'";
  const RunResult native = run("env -u LD_LIBRARY_PATH PYTHONPATH=" GVIRTUS_TORCH_DIR " python3 " +
                               script + " 2>/dev/null");
  const RunResult remoted = run_python(GVIRTUS_TORCH_DIR, backend, script + " 2>/dev/null");
  EXPECT_EQ(native.output, "False 0\n");
  EXPECT_EQ(remoted.output, native.output);
  EXPECT_EQ(remoted.status, native.status);
}

}  // namespace
}  // namespace gvirtus::testing

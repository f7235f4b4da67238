// NVML through gvirtus (src/plugins/nvml, docs/nvml.md), without a GPU:
//   - a program asking what PyTorch, JAX and monitoring tools ask (nvml_probe.c) sees the
//     backend's simulated devices through the stub libnvidia-ml.so.1, over tcp and shm: their
//     identity, memory, utilisation, processes, handles found again by UUID and bus id, field
//     values, and NVML's own refusals (a buffer too small, a null count, a call before init);
//   - a backend that does not serve NVML, and one that cannot be reached, answer nvmlInit as
//     NVML answers natively without its library or its driver, so programs fall back;
//   - hostile requests: a device handle the session was never given does not reach the library,
//     and an array whose length names an absent output ends only that session;
//   - the committed coverage list is the generated one.
//   - gvirtus-run gives a program gvirtus's NVML in both modes;
// The simulated NVML computes nothing and is no GPU evidence: these show what reached the backend.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nvml.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>

#include "common/wire.h"
#include "frontend/client.h"
#include "nvml_calls.h"
#include "support/backend_process.h"
#include "support/core_calls.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

BackendOptions simulated_nvml(TestTransport transport = TestTransport::tcp) {
  BackendOptions options;
  options.plugins = R"(["nvml-simulated"])";
  options.transport = transport;
  options.env = {"GVIRTUS_SIMULATED_DEVICES=2"};
  return options;
}

RunResult probe(const BackendProcess& backend) {
  return run("GVIRTUS_CONFIG=" + backend.client_config_file() +
             " LD_LIBRARY_PATH=" + NVML_STUB_DIR + " " + NVML_PROBE + " 2>&1");
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class NvmlRemoted : public ::testing::TestWithParam<TestTransport> {};

TEST_P(NvmlRemoted, a_program_sees_the_simulated_devices_as_nvml_describes_gpus) {
  BackendProcess backend(simulated_nvml(GetParam()));
  const RunResult result = probe(backend);
  ASSERT_EQ(result.status, 0) << result.output << backend.log();
  // Device p's UUID is the simulated CUDA device's 16 bytes ("gvirtus-simulate", the last moved
  // on by p) in NVML's form; its bus is p + 1.
  const std::string device =
      "  memory total 17179869184 free 17179869184 used 0\n"
      "  memory v2 total 17179869184 reserved 0\n"
      "  utilization gpu 0 memory 0\n"
      "  processes 0 (Success)\n"
      "  sm clock 1980 MHz\n"
      "  temperature: Not Supported\n"
      "  by uuid: Success, the same device\n"
      "  by bus id: Success, the same device\n"
      "  fields: Success, Not Supported and Not Supported\n";
  const std::string expected =
      "init: Success\n"
      "driver 0.0.0-simulated\n"
      "cuda 13000\n"
      "count 2 (Success)\n"
      "device 0: gvirtus simulated device 0 (no GPU), GPU-67766972-7475-732d-7369-6d756c617465"
      ", bus 00000000:01:00.0, index 0, minor 0, cc 9.0\n" +
      device +
      "device 1: gvirtus simulated device 1 (no GPU), GPU-67766972-7475-732d-7369-6d756c617466"
      ", bus 00000000:02:00.0, index 1, minor 1, cc 9.0\n" +
      device +
      "p2p 0-1: Success, not ok\n"
      "index past the end: Invalid Argument\n"
      "unknown uuid: Not Found\n"
      "name into 4 bytes: Insufficient Size\n"
      "count pointer null: Invalid Argument\n"
      "set persistence mode: Not Supported\n"
      "shutdown: Success\n"
      "count after shutdown: Uninitialized\n";
  // The stub's log line about the unsupported setter comes first; the answers follow it.
  const size_t answers = result.output.find("init: ");
  ASSERT_NE(answers, std::string::npos) << result.output;
  EXPECT_EQ(result.output.substr(answers), expected) << backend.log();
  EXPECT_NE(result.output.find("nvmlDeviceSetPersistenceMode is not supported by the gvirtus stub"),
            std::string::npos)
      << result.output;
  // The calls went through the backend's plugin, on the simulated NVML.
  EXPECT_NE(backend.log().find("nvml-simulated"), std::string::npos) << backend.log();
}

// gvirtus-run puts the NVML stub on the program's path in both modes, beside the mode's stub.
TEST(NvmlThroughGvirtusRun, both_modes_give_the_program_gvirtus_nvml) {
  BackendProcess backend(simulated_nvml());
  for (const char* mode : {"runtime", "driver"}) {
    const RunResult result = run(std::string(GVIRTUS_RUN) + " --mode " + mode + " --config " +
                                 backend.client_config_file() + " -- " + NVML_PROBE + " 2>&1");
    EXPECT_EQ(result.status, 0) << mode << ": " << result.output;
    EXPECT_NE(result.output.find("count 2 (Success)\n"), std::string::npos)
        << mode << ": " << result.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, NvmlRemoted,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// A backend whose configuration names no nvml plugin refuses it: nvmlInit says the library is
// not found, as where NVML is not installed, and the program's log says why.
TEST(NvmlAbsent, a_backend_without_nvml_answers_init_as_a_machine_without_its_library) {
  BackendOptions options;
  options.plugins = R"([])";
  BackendProcess backend(options);
  const RunResult result = probe(backend);
  EXPECT_EQ(exit_code(result.status), 1) << result.output;
  EXPECT_NE(result.output.find("init: NVML Shared Library Not Found\n"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("the backend does not serve NVML"), std::string::npos)
      << result.output;
}

// The nvml plugin on a backend machine without NVIDIA's libnvidia-ml.so.1 is refused, naming it.
TEST(NvmlAbsent, the_real_plugin_is_refused_where_the_machine_has_no_nvml) {
  if (void* nvml = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(nvml);
    GTEST_SKIP() << "this machine has NVIDIA's libnvidia-ml.so.1: the plugin is not refused here";
  }
  BackendOptions options;
  options.plugins = R"(["nvml"])";
  BackendProcess backend(options);
  const RunResult result = probe(backend);
  EXPECT_EQ(exit_code(result.status), 1) << result.output;
  EXPECT_NE(result.output.find("init: NVML Shared Library Not Found\n"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("libnvidia-ml.so.1"), std::string::npos) << result.output;
}

// A backend that cannot be reached: nvmlInit says the driver is not loaded, as on a machine
// without a GPU driver, and the program goes on.
TEST(NvmlAbsent, an_unreachable_backend_answers_init_as_a_machine_without_a_driver) {
  BackendProcess backend(simulated_nvml());
  const std::string config = backend.client_config_file();
  backend.stop(SIGTERM);
  const RunResult result = run("GVIRTUS_CONFIG=" + config + " LD_LIBRARY_PATH=" + NVML_STUB_DIR +
                               " " + NVML_PROBE + " 2>&1");
  EXPECT_EQ(exit_code(result.status), 1) << result.output;
  EXPECT_NE(result.output.find("init: Driver Not Loaded\n"), std::string::npos) << result.output;
}

// A client that speaks the nvml table but sends what no stub would.
class HostileNvml : public ::testing::Test {
 protected:
  HostileNvml() : backend_(simulated_nvml()) {}

  Client client() { return Client(backend_.client_config(), {to_ref(nvml::kIdentity)}); }

  // One synchronous call's status, or -1 when it failed as a call (its session ended).
  static int call(Client& client, nvml::Fn fn, const WireWriter& request) {
    const ByteView piece = request.view();
    int status = -1;
    try {
      client.call(nvml::call_id(fn), std::span(&piece, 1), [&](WireReader& in) {
        status = in.get<int32_t>();
        (void)in.get_raw(in.remaining());
      });
    } catch (const Error&) {
    }
    return status;
  }

  static WireWriter init() { return WireWriter{}; }

  // nvmlDeviceGetName(device, name[64], 64).
  static WireWriter name_request(uint64_t device) {
    WireWriter w;
    w.put<uint64_t>(device);
    w.put<uint8_t>(1);
    w.put<uint64_t>(64);
    w.put_raw(std::string(64, '\0').data(), 64);
    w.put<uint32_t>(64);
    return w;
  }

  uint64_t device(Client& c, uint32_t index) {
    WireWriter w;
    w.put<uint32_t>(index);
    w.put<uint8_t>(1);
    w.put<uint64_t>(0);
    uint64_t handle = 0;
    const ByteView piece = w.view();
    c.call(nvml::call_id(nvml::Fn::nvmlDeviceGetHandleByIndex_v2), std::span(&piece, 1),
           [&](WireReader& in) {
             EXPECT_EQ(in.get<int32_t>(), NVML_SUCCESS);
             EXPECT_TRUE(in.get_bool());
             handle = in.get<uint64_t>();
           });
    return handle;
  }

  BackendProcess backend_;
};

TEST_F(HostileNvml, a_device_handle_the_session_was_not_given_never_reaches_the_library) {
  Client c = client();
  ASSERT_EQ(call(c, nvml::Fn::nvmlInit_v2, init()), NVML_SUCCESS);
  const uint64_t real = device(c, 0);
  ASSERT_NE(real, 0u);
  EXPECT_EQ(call(c, nvml::Fn::nvmlDeviceGetName, name_request(real)), NVML_SUCCESS);
  // The simulated NVML would take these for its devices' addresses; NVIDIA's would dereference.
  EXPECT_EQ(call(c, nvml::Fn::nvmlDeviceGetName, name_request(real + 8)),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call(c, nvml::Fn::nvmlDeviceGetName, name_request(0x1000)),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(ping(c)) << "the session goes on";
}

TEST_F(HostileNvml, an_array_whose_length_names_an_absent_output_ends_only_that_session) {
  Client c = client();
  ASSERT_EQ(call(c, nvml::Fn::nvmlInit_v2, init()), NVML_SUCCESS);
  const uint64_t handle = device(c, 0);
  WireWriter w;  // nvmlDeviceGetComputeRunningProcesses_v3(device, infoCount: absent, infos[4])
  w.put<uint64_t>(handle);
  w.put<uint8_t>(0);
  w.put<uint8_t>(1);
  w.put<uint64_t>(4);
  w.put_raw(std::string(4 * sizeof(nvmlProcessInfo_t), '\0').data(), 4 * sizeof(nvmlProcessInfo_t));
  EXPECT_EQ(call(c, nvml::Fn::nvmlDeviceGetComputeRunningProcesses_v3, w), -1);
  EXPECT_NE(error_of([&] { ping(c); }), ErrorKind{0}) << "that session is over";
  Client fresh = client();
  EXPECT_TRUE(ping(fresh)) << backend_.log();
}

TEST(NvmlCoverage, the_committed_coverage_list_is_current) {
  const std::string generated = read(NVML_COVERAGE_GENERATED);
  ASSERT_FALSE(generated.empty()) << "not generated: " << NVML_COVERAGE_GENERATED;
  EXPECT_TRUE(read(NVML_COVERAGE_COMMITTED) == generated)
      << NVML_COVERAGE_COMMITTED << " is out of date; refresh it with\n"
      << "  cmake --build <build dir> --target gvirtus-nvml-coverage-update\nand commit it.";
}

}  // namespace
}  // namespace gvirtus::testing

// Several simulated devices (GVIRTUS_SIMULATED_DEVICES), selected by CUDA_VISIBLE_DEVICES as
// NVIDIA's driver selects GPUs: the rules alone (visible_devices.h), then a driver program
// (devices.cu) run through gvirtus's libcuda.so.1 against backends whose environment sets both,
// which sees the devices it was given, in that order, each with its own name, PCI bus, UUID and
// primary context; and NVIDIA's runtime (runtime_devices.cu) setting each of them in turn.
#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "plugins/cuda/simulated/visible_devices.h"
#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

using simulated::visible_devices;

TEST(SimulatedDeviceRules, one_device_by_default) {
  EXPECT_EQ(visible_devices(nullptr, nullptr).physical, std::vector<int>{0});
  EXPECT_EQ(visible_devices(nullptr, nullptr).error, "");
}

TEST(SimulatedDeviceRules, count_from_one_to_sixteen_else_refused_naming_the_variable) {
  EXPECT_EQ(visible_devices("4", nullptr).physical, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(visible_devices("16", nullptr).physical.size(), 16u);
  for (const char* bad : {"0", "17", "-1", "", "two", "4 ", " 4", "+4", "4x", "99999999999"}) {
    const auto devices = visible_devices(bad, nullptr);
    EXPECT_TRUE(devices.physical.empty()) << bad;
    EXPECT_NE(devices.error.find("GVIRTUS_SIMULATED_DEVICES"), std::string::npos) << bad;
  }
}

TEST(SimulatedDeviceRules, visible_devices_in_their_listed_order) {
  EXPECT_EQ(visible_devices("4", "3,1").physical, (std::vector<int>{3, 1}));
  EXPECT_EQ(visible_devices("4", "2").physical, std::vector<int>{2});
  EXPECT_EQ(visible_devices("4", "0,1,2,3").physical, (std::vector<int>{0, 1, 2, 3}));
}

TEST(SimulatedDeviceRules, an_invalid_entry_hides_itself_and_every_later_one) {
  EXPECT_EQ(visible_devices("4", "1,9,2").physical, std::vector<int>{1});
  EXPECT_EQ(visible_devices("4", "1,-1,2").physical, std::vector<int>{1});
  EXPECT_EQ(visible_devices("4", "2,GPU-0a1b,0").physical, std::vector<int>{2});
  EXPECT_EQ(visible_devices("4", "1,1,2").physical, std::vector<int>{1}) << "a repeat";
  EXPECT_EQ(visible_devices("4", "1,,2").physical, std::vector<int>{1});
  EXPECT_TRUE(visible_devices("4", "4").physical.empty());
  EXPECT_TRUE(visible_devices(nullptr, "1").physical.empty());
}

TEST(SimulatedDeviceRules, an_empty_selection_hides_every_device) {
  const auto devices = visible_devices("4", "");
  EXPECT_TRUE(devices.physical.empty());
  EXPECT_EQ(devices.error, "") << "no device is not a configuration error";
}

// devices.cu run on a backend with the cuda-simulated plugin and `env` in its environment.
class SimulatedDevices : public ::testing::Test {
 protected:
  // `client_env`: more NAME=VALUE for the program (GVIRTUS_VISIBLE_DEVICES, say).
  RunResult run_devices(const std::vector<std::string>& env,
                        const std::string& program = GVIRTUS_STATIC_DIR "/devices",
                        const std::string& client_env = "") {
    backend_ = std::make_unique<BackendProcess>(
        BackendOptions{.extra_json = "", .plugins = R"(["cuda-simulated"])", .env = env});
    return run("env " GVIRTUS_STUB_PROGRAM_ENV " " + client_env +
               " GVIRTUS_CONFIG=" + backend_->client_config_file() +
               " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR + " " + program + " 2>&1");
  }

  // The line devices.cu prints for `ordinal` ("device O name ... by_bus O").
  static std::string device_line(const std::string& output, int ordinal) {
    std::smatch m;
    const std::regex line("device " + std::to_string(ordinal) + " name [^\n]*");
    return std::regex_search(output, m, line) ? m.str() : "";
  }

  // What devices.cu prints for the device of physical index `p` at `ordinal`.
  static std::string expected(int ordinal, int p) {
    char uuid_last[3];
    std::snprintf(uuid_last, sizeof uuid_last, "%02x", 'e' + p);
    return "device " + std::to_string(ordinal) + " name \"gvirtus simulated device " +
           std::to_string(p) + " (no GPU)\" bus 0000:0" + std::to_string(p + 1) +
           ":00.0 bus_attribute " + std::to_string(p + 1) + " uuid 677669727475732d73696d756c6174" +
           uuid_last + " by_bus " + std::to_string(ordinal);
  }

  std::unique_ptr<BackendProcess> backend_;
};

TEST_F(SimulatedDevices, four_devices_in_order_each_with_its_identity_and_primary_context) {
  const RunResult result = run_devices({"GVIRTUS_SIMULATED_DEVICES=4"});
  ASSERT_EQ(result.status, 0) << result.output << backend_->log();
  EXPECT_NE(result.output.find("count 4\n"), std::string::npos) << result.output;
  for (int ordinal = 0; ordinal < 4; ++ordinal) {
    EXPECT_EQ(device_line(result.output, ordinal), expected(ordinal, ordinal)) << result.output;
    EXPECT_NE(
        result.output.find("context " + std::to_string(ordinal) + " retain 0 set 0 get 0 device " +
                           std::to_string(ordinal) + " state 0 active 1\n"),
        std::string::npos)
        << result.output;
  }
  EXPECT_NE(result.output.find("past the last: get 101 name 101\n"), std::string::npos)
      << "CUDA_ERROR_INVALID_DEVICE\n"
      << result.output;
  EXPECT_NE(result.output.find("distinct contexts 1\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("can access peer 0->1 1 1->1 0\n"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("enable peer -> 0\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("enable again -> 704\n"), std::string::npos)
      << "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED\n"
      << result.output;
  EXPECT_NE(result.output.find("peer copy ok\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("reset 1 -> 0: device 0's memory 0, device 1's 1\n"),
            std::string::npos)
      << "device 1's reset frees its memory (CUDA_ERROR_INVALID_VALUE after), not device 0's\n"
      << result.output;
  EXPECT_TRUE(backend_->logged("4 visible device(s), physical 0,1,2,3")) << backend_->log();
}

TEST_F(SimulatedDevices, visible_devices_3_1_are_ordinals_0_and_1) {
  const RunResult result = run_devices({"GVIRTUS_SIMULATED_DEVICES=4", "CUDA_VISIBLE_DEVICES=3,1"});
  ASSERT_EQ(result.status, 0) << result.output << backend_->log();
  EXPECT_NE(result.output.find("count 2\n"), std::string::npos) << result.output;
  EXPECT_EQ(device_line(result.output, 0), expected(0, 3)) << result.output;
  EXPECT_EQ(device_line(result.output, 1), expected(1, 1)) << result.output;
  EXPECT_NE(result.output.find("context 1 retain 0 set 0 get 0 device 1 state 0 active 1\n"),
            std::string::npos)
      << result.output;
}

// The application's own selection (GVIRTUS_VISIBLE_DEVICES, common/device_selection.h) travels in
// the hello and becomes the worker's CUDA_VISIBLE_DEVICES before the driver initialises.
TEST_F(SimulatedDevices, the_applications_selection_3_1_is_what_it_sees) {
  const RunResult result =
      run_devices({"GVIRTUS_SIMULATED_DEVICES=4"}, GVIRTUS_STATIC_DIR "/devices",
                  "GVIRTUS_VISIBLE_DEVICES=3,1");
  ASSERT_EQ(result.status, 0) << result.output << backend_->log();
  EXPECT_NE(result.output.find("count 2\n"), std::string::npos) << result.output;
  EXPECT_EQ(device_line(result.output, 0), expected(0, 3)) << result.output;
  EXPECT_EQ(device_line(result.output, 1), expected(1, 1)) << result.output;
}

// A backend its operator limited to physical 3, 2 and 1: the application's "2,0" counts in that
// list, so it sees physical 1, then 3.
TEST_F(SimulatedDevices, the_applications_selection_counts_in_the_backends_own) {
  const RunResult result =
      run_devices({"GVIRTUS_SIMULATED_DEVICES=4", "CUDA_VISIBLE_DEVICES=3,2,1"},
                  GVIRTUS_STATIC_DIR "/devices", "GVIRTUS_VISIBLE_DEVICES=2,0");
  ASSERT_EQ(result.status, 0) << result.output << backend_->log();
  EXPECT_NE(result.output.find("count 2\n"), std::string::npos) << result.output;
  EXPECT_EQ(device_line(result.output, 0), expected(0, 1)) << result.output;
  EXPECT_EQ(device_line(result.output, 1), expected(1, 3)) << result.output;
  EXPECT_TRUE(backend_->logged("devices 2,0 selected (CUDA_VISIBLE_DEVICES=1,3)"))
      << backend_->log();
}

// NVIDIA's runtime on the selected devices: cudaSetDevice makes each current (its primary
// context), with its properties and memory, and devices are peers.
TEST_F(SimulatedDevices, the_runtime_sets_each_selected_device_and_copies_between_peers) {
  const RunResult result =
      run_devices({"GVIRTUS_SIMULATED_DEVICES=4", "CUDA_VISIBLE_DEVICES=2,0,3"},
                  GVIRTUS_STATIC_DIR "/runtime_devices");
  ASSERT_EQ(result.status, 0) << result.output << backend_->log();
  EXPECT_NE(result.output.find("count 0 -> 3\n"), std::string::npos) << result.output;
  const int physical[] = {2, 0, 3};
  for (int dev = 0; dev < 3; ++dev) {
    const std::string line = "device " + std::to_string(dev) +
                             " set 0 properties 0 malloc 0 current " + std::to_string(dev) +
                             " name \"gvirtus simulated device " + std::to_string(physical[dev]) +
                             " (no GPU)\" bus " + std::to_string(physical[dev] + 1) + "\n";
    EXPECT_NE(result.output.find(line), std::string::npos) << line << result.output;
  }
  EXPECT_NE(result.output.find("peer 1 enable 0\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("memcpy peer 0\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("last error 0\n"), std::string::npos) << result.output;
}

TEST_F(SimulatedDevices, an_out_of_range_entry_hides_the_rest) {
  const RunResult result =
      run_devices({"GVIRTUS_SIMULATED_DEVICES=4", "CUDA_VISIBLE_DEVICES=1,9,2"});
  ASSERT_EQ(result.status, 0) << result.output << backend_->log();
  EXPECT_NE(result.output.find("count 1\n"), std::string::npos) << result.output;
  EXPECT_EQ(device_line(result.output, 0), expected(0, 1)) << result.output;
  EXPECT_EQ(device_line(result.output, 1), "") << result.output;
  EXPECT_NE(result.output.find("past the last: get 101 name 101\n"), std::string::npos)
      << result.output;
}

TEST_F(SimulatedDevices, an_empty_selection_is_no_device_at_init) {
  const RunResult result = run_devices({"GVIRTUS_SIMULATED_DEVICES=4", "CUDA_VISIBLE_DEVICES="});
  EXPECT_NE(result.output.find("cuInit -> 100\n"), std::string::npos)
      << "CUDA_ERROR_NO_DEVICE\n"
      << result.output << backend_->log();
}

TEST_F(SimulatedDevices, an_invalid_count_is_refused_at_init_and_logged) {
  const RunResult result = run_devices({"GVIRTUS_SIMULATED_DEVICES=17"});
  EXPECT_NE(result.output.find("cuInit -> 1\n"), std::string::npos)
      << "CUDA_ERROR_INVALID_VALUE\n"
      << result.output << backend_->log();
  EXPECT_TRUE(backend_->logged("GVIRTUS_SIMULATED_DEVICES=\"17\" is not a device count"))
      << backend_->log();
}

TEST_F(SimulatedDevices, an_unknown_address_placement_is_refused_at_init_and_logged) {
  const RunResult result = run_devices({"GVIRTUS_SIMULATED_ADDRESSES=random"});
  EXPECT_NE(result.output.find("cuInit -> 1\n"), std::string::npos)
      << "CUDA_ERROR_INVALID_VALUE\n"
      << result.output << backend_->log();
  EXPECT_TRUE(
      backend_->logged("GVIRTUS_SIMULATED_ADDRESSES=\"random\" is neither \"host\" nor \"fixed\""))
      << backend_->log();
}

TEST_F(SimulatedDevices, one_device_by_default) {
  const RunResult result = run_devices({});
  ASSERT_EQ(result.status, 0) << result.output << backend_->log();
  EXPECT_NE(result.output.find("count 1\n"), std::string::npos) << result.output;
  EXPECT_EQ(device_line(result.output, 0), expected(0, 0)) << result.output;
}

}  // namespace
}  // namespace gvirtus::testing

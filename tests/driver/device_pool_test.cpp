// One application over a pool of three backends on loopback, each with its own simulated devices
// (1, 2 and 1): pool_devices.cu, through gvirtus's libcuda.so.1, sees the four devices in the
// pool's order, launches on each (and each backend's record of launches shows it served its own
// devices and no other), finds no peer access across backends, and copies between every ordered
// pair of devices - relayed through the client across backends, by the backend within one - from
// 1 B to 256 MiB, sync, async and with unified addressing, every byte checked. Then one backend
// is killed: calls on its device fail with CUDA's "device unavailable", within the reply timeout,
// and the others go on. The backends place device memory as GPU drivers do, at the same addresses
// in every process (GVIRTUS_SIMULATED_ADDRESSES=fixed): the pool keeps their allocations disjoint
// by allocating again where one lands on another backend's, and says so once. Simulated devices
// compute nothing: this is the pool's routing, not GPU evidence.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The grids of a backend's recorded launches ("grid":[G,1,1] per line), in order.
std::vector<int> launch_grids(const std::string& record) {
  std::vector<int> grids;
  const std::regex grid("\"grid\":\\[([0-9]+),1,1\\]");
  for (auto it = std::sregex_iterator(record.begin(), record.end(), grid);
       it != std::sregex_iterator(); ++it) {
    grids.push_back(std::stoi((*it)[1]));
  }
  return grids;
}

bool has_line(const std::string& output, const std::string& line) {
  return output.find(line + "\n") != std::string::npos;
}

// Three backends with 1, 2 and 1 simulated devices, each recording its launches in its own file
// and placing device memory at the same addresses as the others, and a client configuration
// naming them as a pool.
// Under AddressSanitizer every backend process's allocator hands out the same addresses, so the
// simulated devices' handles (modules, functions, events: heap objects) collide between backends,
// which the pool cannot tell apart (docs/cluster.md, "Not there yet"): the pool runs unsanitized
// only. Device memory no longer collides unresolved.
#define SKIP_WHEN_SANITIZED()                                                                     \
  if (GVIRTUS_SANITIZED) {                                                                        \
    GTEST_SKIP() << "under AddressSanitizer the backends' allocators give the same addresses "    \
                    "in every process: a pool cannot tell their handles apart (docs/cluster.md)"; \
  }

struct ThreeSimulatedBackends {
  std::string dir = ::testing::TempDir() + "/device_pool_" + std::to_string(::getpid());
  std::vector<std::unique_ptr<BackendProcess>> backends;
  std::string config = dir + "/pool.json";

  ThreeSimulatedBackends() {
    EXPECT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
    const int device_counts[] = {1, 2, 1};
    std::vector<const BackendProcess*> views;
    for (int b = 0; b < 3; ++b) {
      const std::string launches = launch_file(b);
      std::remove(launches.c_str());
      backends.push_back(std::make_unique<BackendProcess>(BackendOptions{
          .extra_json = "",
          .plugins = R"(["cuda-simulated"])",
          .env = {"GVIRTUS_SIMULATED_DEVICES=" + std::to_string(device_counts[b]),
                  "GVIRTUS_SIMULATED_LAUNCHES=" + launches, "GVIRTUS_SIMULATED_ADDRESSES=fixed"}}));
      views.push_back(backends.back().get());
    }
    std::ofstream(config) << pool_config_json(views, R"("reply_timeout_ms":5000)");
  }
  std::string launch_file(int backend) const {
    return dir + "/launches-" + std::to_string(backend);
  }
  // pool_devices.cu over the pool, with `env` (NAME=VALUE ...) and copies up to `largest` bytes.
  RunResult run_program(const std::string& env, const std::string& largest) const {
    return run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_CONFIG=" + config + " " + env +
               " LD_LIBRARY_PATH=" GVIRTUS_DRIVER_STUB_DIR " " GVIRTUS_STATIC_DIR
               "/pool_devices " GVIRTUS_SAXPY_FATBIN " " +
               largest + " 2>&1");
  }
};

TEST(DevicePool, three_backends_serve_one_application_as_one_device_list) {
  SKIP_WHEN_SANITIZED();
  ThreeSimulatedBackends three;
  const std::string& dir = three.dir;
  auto& backends = three.backends;
  const RunResult result = three.run_program(
      "GVIRTUS_STATS=1 GVIRTUS_POOL_KILL_PID=" + std::to_string(backends[2]->pid()), "268435456");
  const std::string& out = result.output;
  EXPECT_EQ(result.status, 0) << out;

  EXPECT_TRUE(has_line(out, "count 4")) << out;
  // The backends gave the same addresses, and the pool took others (said once).
  EXPECT_TRUE(std::regex_search(out, std::regex("pool backend [12] placed device memory at "
                                                "0x5200[0-9a-f]+, where another backend's lies; "
                                                "allocated again")))
      << out;
  EXPECT_TRUE(has_line(out, "past the last: get 101")) << "CUDA_ERROR_INVALID_DEVICE\n" << out;
  // Each backend's devices in its own order: the name says the index on its backend.
  const int local_index[] = {0, 0, 1, 0};
  for (int d = 0; d < 4; ++d) {
    EXPECT_TRUE(has_line(out, "device " + std::to_string(d) + " name \"gvirtus simulated device " +
                                  std::to_string(local_index[d]) +
                                  " (no GPU)\" context of device " + std::to_string(d)))
        << out;
    EXPECT_TRUE(has_line(out, "device " + std::to_string(d) + " launch 0")) << out;
  }
  // Each launch reached the backend of its device, and only that one (grid = ordinal + 1).
  EXPECT_EQ(launch_grids(read_file(dir + "/launches-0")), std::vector<int>({1}));
  EXPECT_EQ(launch_grids(read_file(dir + "/launches-1")), std::vector<int>({2, 3}));
  EXPECT_EQ(launch_grids(read_file(dir + "/launches-2")), std::vector<int>({4}));

  // Peers only within a backend (devices 1 and 2, both backend 1's).
  EXPECT_TRUE(has_line(out, "peer 0: 0 0 0 0")) << out;
  EXPECT_TRUE(has_line(out, "peer 1: 0 0 1 0")) << out;
  EXPECT_TRUE(has_line(out, "peer 2: 0 1 0 0")) << out;
  EXPECT_TRUE(has_line(out, "peer 3: 0 0 0 0")) << out;

  for (const char* size : {"1", "4099", "1048577", "67108864", "268435456"}) {
    for (const char* mode : {"sync", "async", "unified"}) {
      if (std::string(mode) == "unified" && std::stoull(size) > 1048577) continue;
      const std::regex line(std::string("matrix ") + size + " " + mode +
                            ": 12 pairs, every byte checked");
      EXPECT_TRUE(std::regex_search(out, line)) << size << " " << mode << "\n" << out;
    }
  }

  // GVIRTUS_STATS says which copies were relayed, by pair of backends: 13 rounds of the matrix
  // (5 sizes sync and async, 3 unified), 2 pairs of devices from backend 0 to backend 1 in each;
  // the copies between backend 1's two devices were its own.
  EXPECT_TRUE(std::regex_search(out, std::regex("copy direct backend0 -> backend1 +26 +"))) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("copy direct backend2 -> backend0 +13 +"))) << out;
  EXPECT_EQ(out.find("copy direct backend1 -> backend1"), std::string::npos) << out;

  // Backend 2 (device 3) is gone: its calls fail, at once, with CUDA_ERROR_DEVICE_UNAVAILABLE
  // (46); the other backends' devices go on.
  for (int d = 0; d < 3; ++d) {
    EXPECT_TRUE(std::regex_search(out, std::regex("after the loss device " + std::to_string(d) +
                                                  ": set 0 memset 0 synchronize 0")))
        << out;
  }
  std::smatch lost;
  ASSERT_TRUE(
      std::regex_search(out, lost,
                        std::regex("after the loss device 3: set 46 memset 46 synchronize [0-9]+ "
                                   "\\(([0-9.]+) s\\)")))
      << out;
  EXPECT_LT(std::stod(lost[1]), 5.0) << "within the reply timeout";
  EXPECT_TRUE(has_line(out, "done")) << out;

  // The matrix's times, for the log (a benchmark measures; this only shows).
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("matrix ", 0) == 0) std::cout << line << "\n";
  }
}

TEST(DevicePool, a_selection_counts_over_the_pools_devices_in_its_order) {
  SKIP_WHEN_SANITIZED();
  ThreeSimulatedBackends three;
  // The pool's device 3 (backend 2's only one), then its device 1 (backend 1's first).
  const RunResult result = three.run_program(
      "GVIRTUS_STATS=1 GVIRTUS_POOL_COPIES=relayed GVIRTUS_VISIBLE_DEVICES=3,1", "4099");
  const std::string& out = result.output;
  EXPECT_EQ(result.status, 0) << out;
  EXPECT_TRUE(has_line(out, "count 2")) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("matrix 4099 sync: 2 pairs, every byte checked")))
      << out;
  // GVIRTUS_POOL_COPIES=relayed: every copy between the two backends went through the client: 6
  // rounds of the matrix (1 and 4099 bytes, sync, async and unified), one pair each way.
  EXPECT_TRUE(std::regex_search(out, std::regex("copy relayed backend2 -> backend1 +6 +"))) << out;
  EXPECT_EQ(out.find("copy direct"), std::string::npos) << out;
  EXPECT_EQ(launch_grids(read_file(three.launch_file(0))), std::vector<int>{});
  EXPECT_EQ(launch_grids(read_file(three.launch_file(1))), std::vector<int>({2}));
  EXPECT_EQ(launch_grids(read_file(three.launch_file(2))), std::vector<int>({1}));

  const RunResult beyond = three.run_program("GVIRTUS_VISIBLE_DEVICES=1,4", "1");
  EXPECT_NE(beyond.status, 0);
  EXPECT_TRUE(has_line(beyond.output, "cuInit -> 101"))
      << "a device the pool lacks is refused (CUDA_ERROR_INVALID_DEVICE)\n"
      << beyond.output;
  EXPECT_NE(beyond.output.find("names device 4, and the pool's backends have 4 device(s)"),
            std::string::npos)
      << beyond.output;
}

}  // namespace
}  // namespace gvirtus::testing

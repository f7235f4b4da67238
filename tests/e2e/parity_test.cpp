// Each program runs natively and through gvirtus (gvirtus-run against a real backend with the
// cudart plugin): same standard output, same exit status.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

std::vector<std::string> programs() {
  std::vector<std::string> out;
  std::stringstream list(GVIRTUS_E2E_PROGRAMS);
  for (std::string name; std::getline(list, name, ',');) out.push_back(name);
  return out;
}

// $GVIRTUS_PARITY_ENDPOINT: one run per program over that endpoint instead of tcp and shm.
const char* configured_endpoint() {
  return std::getenv("GVIRTUS_PARITY_ENDPOINT");
}

// $GVIRTUS_PARITY_CLIENT_CONFIG: the remote runs go to a backend already running elsewhere, named
// by this client configuration (the VM harness: a host backend behind an ivshmem device). That
// backend's log is not here: whoever runs it checks that every program's session reached it.
const char* external_client_config() {
  return std::getenv("GVIRTUS_PARITY_CLIENT_CONFIG");
}

const char* remote_name() {
  if (external_client_config() != nullptr) return "external";
  if (configured_endpoint() != nullptr) return "endpoint";
  return nullptr;
}

std::vector<TestTransport> transports() {
  if (remote_name() != nullptr) return {TestTransport::tcp};  // stands for the one remote
  return {TestTransport::tcp, TestTransport::shm};
}

// Every program over every transport: the stub and the backend must behave the same whatever
// carries the frames (shm also moves large copies differently).
using ProgramOverTransport = std::tuple<std::string, TestTransport>;

class Parity : public ::testing::TestWithParam<ProgramOverTransport> {};

// The runtime's plugin, and the driver's: a program may call driver functions through the
// pointers cudaGetDriverEntryPoint gives (driver_entry_points), which share the session.
constexpr const char* kPlugins = R"(["cudart", "cuda"])";

TEST_P(Parity, native_and_remoted_runs_print_the_same_and_exit_the_same) {
  const auto& [name, transport] = GetParam();
  if (name == "mapped_memory" && transport == TestTransport::tcp && remote_name() == nullptr) {
    GTEST_SKIP() << "kernels cannot reach client memory over tcp (docs/cudart.md, Host memory): "
                    "mapped_memory runs over shm only";
  }
  const std::string program = std::string(GVIRTUS_E2E_BIN) + "/" + name;
  const RunResult native = run("env -u LD_LIBRARY_PATH " + program + " 2>/dev/null");
  ASSERT_FALSE(native.output.empty()) << "the native run printed nothing";

  // GVIRTUS_PARITY_ENDPOINT (an endpoint object with "port":"0") runs the remote side over that
  // endpoint instead; the VM harness uses it for rdma and vsock (test names say "_over_endpoint"),
  // and GVIRTUS_PARITY_CLIENT_CONFIG for its host's backend behind ivshmem ("_over_external").
  std::optional<BackendProcess> backend;
  std::string config;
  if (const char* external = external_client_config()) {
    config = external;
  } else if (const char* endpoint = configured_endpoint()) {
    config = backend.emplace("", kPlugins, std::string(endpoint)).client_config_file();
  } else {
    config = backend.emplace("", kPlugins, transport).client_config_file();
  }
  const RunResult remote =
      run("env " GVIRTUS_E2E_REMOTE_ENV " " + std::string(GVIRTUS_BUILD_BIN) +
          "/gvirtus-run --config " + config + " -- " + program + " 2>/dev/null");
  const std::string log = backend ? backend->log() : "(an external backend: see where it runs)";
  EXPECT_EQ(remote.output, native.output) << "backend log:\n" << log;
  // The remoted run really went through the backend (and not NVIDIA's library).
  if (backend) {
    EXPECT_NE(log.find("session with " + name), std::string::npos) << log;
  }
  EXPECT_EQ(remote.status, native.status);
  EXPECT_EQ(native.output.find("FAILED"), std::string::npos) << native.output;
}

INSTANTIATE_TEST_SUITE_P(Programs, Parity,
                         ::testing::Combine(::testing::ValuesIn(programs()),
                                            ::testing::ValuesIn(transports())),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_over_" +
                                  (remote_name() ? std::string(remote_name())
                                                 : to_string(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace gvirtus::testing

// The device selection through the real gvirtus-backend: a client's selection (its configuration's
// "visible_devices", or GVIRTUS_VISIBLE_DEVICES over it) reaches the worker in the hello and
// becomes the worker's CUDA_VISIBLE_DEVICES before any plugin opens, composed with the backend's
// own; a selection the backend cannot honour, or a malformed one, is refused with the reason on
// both sides and the backend goes on. (What the selected devices then look like to an application
// is shown on the simulated device's several GPUs, tests/driver.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "backend/gpu_inventory.h"
#include "common/error.h"
#include "frontend/client.h"
#include "support/backend_process.h"
#include "support/core_calls.h"
#include "support/scoped_env.h"

namespace gvirtus::testing {
namespace {

using ::testing::HasSubstr;

// The message of the error a ping through a client selecting `selection` gets, or "".
std::string ping_error(const BackendProcess& backend, const std::string& selection) {
  Config config = backend.client_config();
  config.visible_devices = selection;
  try {
    Client client(config, {});
    ping(client);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Where NVML counts this machine's GPUs and they are fewer than a selection names, the backend
// refuses the selection (a GPU machine); otherwise (no driver) CUDA decides and it is applied.
// Returns the refusal a selection naming device `highest` gets here, or "" where it is applied.
std::string refusal_here(uint32_t highest) {
  const GpuInventory gpus = read_gpu_inventory();
  if (!gpus.error.empty() || highest < gpus.gpus.size()) return "";
  return "device " + std::to_string(highest) + " was selected, but this backend has " +
         std::to_string(gpus.gpus.size()) + " GPUs";
}

TEST(DeviceSelection, the_worker_sees_the_clients_selection_as_its_cuda_visible_devices) {
  const ScopedEnv backend_env("CUDA_VISIBLE_DEVICES", std::nullopt);
  const ScopedEnv client_env("GVIRTUS_VISIBLE_DEVICES", std::nullopt);
  BackendProcess backend;
  if (const std::string refused = refusal_here(1); !refused.empty()) {
    EXPECT_EQ(ping_error(backend, "1,0"), refused);
    EXPECT_EQ(ping_error(backend, ""), "");
    return;
  }
  EXPECT_EQ(ping_error(backend, "1,0"), "");
  EXPECT_TRUE(backend.logged("devices 1,0 selected (CUDA_VISIBLE_DEVICES=1,0)")) << backend.log();
  EXPECT_EQ(ping_error(backend, ""), "");
  EXPECT_EQ(backend.log().find("devices  selected"), std::string::npos)
      << "no selection leaves the worker's environment alone";
}

TEST(DeviceSelection, the_variable_replaces_the_configuration) {
  const ScopedEnv backend_env("CUDA_VISIBLE_DEVICES", std::nullopt);
  BackendProcess backend;
  const ScopedEnv client_env("GVIRTUS_VISIBLE_DEVICES", "3");
  if (const std::string refused = refusal_here(3); !refused.empty()) {
    EXPECT_EQ(ping_error(backend, "0,1"), refused) << "the variable's selection, not the file's";
    return;
  }
  EXPECT_EQ(ping_error(backend, "0,1"), "");
  EXPECT_TRUE(backend.logged("devices 3 selected (CUDA_VISIBLE_DEVICES=3)")) << backend.log();
}

TEST(DeviceSelection, a_backend_limited_by_its_operator_composes_by_position) {
  const ScopedEnv client_env("GVIRTUS_VISIBLE_DEVICES", std::nullopt);
  std::optional<BackendProcess> backend;
  {
    const ScopedEnv backend_env("CUDA_VISIBLE_DEVICES", "5,7");
    backend.emplace();
  }
  EXPECT_EQ(ping_error(*backend, "1"), "");
  EXPECT_TRUE(backend->logged("devices 1 selected (CUDA_VISIBLE_DEVICES=7)")) << backend->log();
  EXPECT_THAT(ping_error(*backend, "0,2"),
              HasSubstr("device 2 was selected, but this backend offers 2 (its "
                        "CUDA_VISIBLE_DEVICES is \"5,7\")"));
  EXPECT_EQ(ping_error(*backend, "1,0"), "") << "the backend goes on after a refusal";
}

TEST(DeviceSelection, a_malformed_selection_fails_on_the_client_naming_the_variable) {
  const ScopedEnv backend_env("CUDA_VISIBLE_DEVICES", std::nullopt);
  BackendProcess backend;
  const ScopedEnv client_env("GVIRTUS_VISIBLE_DEVICES", "0,zero");
  EXPECT_THAT(ping_error(backend, ""),
              HasSubstr("GVIRTUS_VISIBLE_DEVICES: \"0,zero\": \"zero\" is not an index"));
  EXPECT_TRUE(backend.workers().empty()) << "nothing reached the backend";
}

}  // namespace
}  // namespace gvirtus::testing

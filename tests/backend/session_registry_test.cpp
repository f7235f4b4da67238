// The session's registry (backend/session_registry.h) with the services of two plugins joined
// (backend/services/session_services.h), as two plugins of one session use them: each answers for
// itself, asks the other only about what it does not hold, forgets what the other destroyed of
// its handles, and hears the other's device resets. Kinds meet by name, whatever their index.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "backend/services/session_services.h"
#include "backend/session_registry.h"

namespace gvirtus {
namespace {

using services::SessionServices;

// Two plugins' kind lists: "stream" is index 1 in one and 0 in the other.
constexpr std::array<const char*, 2> kRuntimeKinds = {"event", "stream"};
constexpr std::array<const char*, 2> kDriverKinds = {"stream", "module"};

int g_reset_heard = -1;

const void* address(uintptr_t a) {
  return reinterpret_cast<const void*>(a);
}

TEST(SessionRegistry, plugins_answer_for_each_other_by_kind_name) {
  SessionRegistry registry;
  SessionServices runtime, driver;
  runtime.reset(nullptr, registry.table(), kRuntimeKinds);
  driver.reset(nullptr, registry.table(), kDriverKinds, [](int device) { g_reset_heard = device; });

  driver.handles.adopt(0, address(0x1000), 0);  // a driver stream
  driver.handles.adopt(1, address(0x2000), 0);  // a driver module
  EXPECT_TRUE(runtime.peer_holds("stream", address(0x1000)));
  EXPECT_FALSE(runtime.peer_holds("event", address(0x1000))) << "a stream is no event";
  EXPECT_FALSE(runtime.peer_holds("stream", address(0x2000))) << "a module is no stream";
  EXPECT_FALSE(driver.peer_holds("stream", address(0x1000))) << "never answered by itself";
  EXPECT_FALSE(runtime.peer_holds(nullptr, address(0x1000)));

  driver.allocations.allocated(address(0x10000), 256);
  EXPECT_TRUE(runtime.peer_contains(address(0x10000), 256));
  EXPECT_TRUE(runtime.peer_contains(address(0x10080), 128));
  EXPECT_FALSE(runtime.peer_contains(address(0x10080), 256)) << "runs past the allocation";
  EXPECT_FALSE(driver.peer_contains(address(0x10000), 256)) << "never answered by itself";

  // The runtime destroyed the driver's stream: the driver forgets it.
  runtime.peer_forget("stream", address(0x1000));
  EXPECT_FALSE(driver.handles.holds(0, address(0x1000)));
  EXPECT_TRUE(driver.handles.holds(1, address(0x2000)));

  // A device reset through the runtime is heard by the driver, not by the runtime itself.
  g_reset_heard = -1;
  runtime.peer_device_reset(3);
  EXPECT_EQ(g_reset_heard, 3);
  g_reset_heard = -1;
  driver.peer_device_reset(4);
  EXPECT_EQ(g_reset_heard, -1);
}

TEST(SessionRegistry, without_a_registry_nothing_is_asked) {
  SessionServices alone;
  alone.reset(nullptr);
  EXPECT_FALSE(alone.peer_holds("stream", address(0x1000)));
  EXPECT_FALSE(alone.peer_contains(address(0x1000), 1));
  alone.peer_forget("stream", address(0x1000));
  alone.peer_device_reset(0);
}

TEST(SessionRegistry, a_plugin_joining_twice_is_one_peer) {
  SessionRegistry registry;
  SessionServices runtime, driver;
  runtime.reset(nullptr, registry.table(), kRuntimeKinds);
  driver.reset(nullptr, registry.table(), kDriverKinds);
  driver.reset(nullptr, registry.table(), kDriverKinds);  // opened again in the session
  driver.handles.adopt(0, address(0x1000), 0);
  EXPECT_TRUE(runtime.peer_holds("stream", address(0x1000)));
}

TEST(HandleTableForgetOwned, forgets_only_the_kinds_named_of_that_owner) {
  services::HandleTable table;
  table.adopt(0, address(0x1), 7);
  table.adopt(1, address(0x2), 7);
  table.adopt(0, address(0x3), 8);
  table.forget_owned(7, uint64_t{1} << 0);
  EXPECT_FALSE(table.holds(0, address(0x1)));
  EXPECT_TRUE(table.holds(1, address(0x2))) << "another kind of the same owner stays";
  EXPECT_TRUE(table.holds(0, address(0x3))) << "the same kind of another owner stays";
}

}  // namespace
}  // namespace gvirtus

// The backend's handle table and vetting rules (the shared services of backend/services/, with
// cudart's kinds and rules from cudart_vetting.h and backend/vetting.h), in this process: which
// handles pass, how a destroy takes a handle out and puts it back when the destroy fails, what a
// device reset forgets, and which addresses count as device memory.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plugins/cudart/backend/shared_host_memory.h"
#include "plugins/cudart/backend/vetting.h"

namespace gvirtus::cudart {
namespace {

using services::HandleTable;

services::HandleTable& session_handles() {
  return services::session_services().handles;
}

// The kinds as the table stores them.
constexpr uint16_t kStream = static_cast<uint16_t>(HandleKind::kStream);
constexpr uint16_t kEvent = static_cast<uint16_t>(HandleKind::kEvent);
constexpr uint16_t kMemPool = static_cast<uint16_t>(HandleKind::kMemoryPool);

cudaError_t merge_last_error(cudaError_t result, bool reset) {
  return static_cast<cudaError_t>(services::merge_last_error(result, reset));
}
void begin_vetted_call() {
  services::begin_call();
}
void end_vetted_call(cudaError_t result) {
  services::end_call(result, cudaSuccess);
}

template <typename Handle>
Handle made_up(uintptr_t value) {
  return reinterpret_cast<Handle>(value);
}

class HandleTableTest : public ::testing::Test {
 protected:
  void SetUp() override { session_handles().clear(); }
  void TearDown() override {
    session_handles().clear();
    (void)merge_last_error(cudaSuccess, true);
  }
};

TEST_F(HandleTableTest, a_handle_is_held_as_the_kind_it_was_adopted_as) {
  HandleTable table;
  const int stream = 0, event = 0;
  table.adopt(kStream, &stream, 0);
  table.adopt(kEvent, &event, 1);
  EXPECT_TRUE(table.holds(kStream, &stream));
  EXPECT_FALSE(table.holds(kEvent, &stream));
  EXPECT_TRUE(table.holds(kEvent, &event));
  EXPECT_FALSE(table.holds(kMemPool, &event));
  EXPECT_EQ(table.release(kEvent, &stream), HandleTable::kNotHeld);
  EXPECT_EQ(table.release(kEvent, &event), 1);
  EXPECT_FALSE(table.holds(kEvent, &event));
  EXPECT_EQ(table.size(), 1u);
}

// Kinds allowed to alias share an address, each held, released and forgotten on its own (the
// driver's green context and its context); any other kind adopted there replaces both.
TEST_F(HandleTableTest, aliasing_kinds_share_an_address_and_other_kinds_replace_them) {
  HandleTable table;
  table.allow_alias(kStream, kEvent);
  const int address = 0;
  table.adopt(kStream, &address, 0);
  table.adopt(kEvent, &address, 1);
  EXPECT_TRUE(table.holds(kStream, &address));
  EXPECT_TRUE(table.holds(kEvent, &address));
  EXPECT_EQ(table.size(), 1u) << "one address";
  EXPECT_EQ(table.adoption(&address).kind, kEvent) << "the later adoption";
  EXPECT_EQ(table.release(kEvent, &address), 1);
  EXPECT_TRUE(table.holds(kStream, &address)) << "its alias stays";
  table.adopt(kEvent, &address, 1);
  table.forget_owned(1, uint64_t{1} << kEvent);
  EXPECT_TRUE(table.holds(kStream, &address));
  EXPECT_FALSE(table.holds(kEvent, &address));
  table.adopt(kEvent, &address, 1);
  table.adopt(kMemPool, &address, 2);  // no alias of either: the library destroyed both
  EXPECT_FALSE(table.holds(kStream, &address));
  EXPECT_FALSE(table.holds(kEvent, &address));
  EXPECT_TRUE(table.holds(kMemPool, &address));
  table.forget_owner(2);
  EXPECT_EQ(table.size(), 0u);
}

// What a session learns of a handle holds for one adoption: the same address adopted again (the
// library gave it out anew after destroying what was there) is another generation.
TEST_F(HandleTableTest, each_adoption_of_a_handle_is_a_generation_of_its_own) {
  HandleTable table;
  const int stream = 0, event = 0;
  EXPECT_EQ(table.generation(kStream, &stream), 0u) << "not held";
  table.adopt(kStream, &stream, 0);
  const uint64_t first = table.generation(kStream, &stream);
  EXPECT_NE(first, 0u);
  EXPECT_EQ(table.generation(kEvent, &stream), 0u) << "held as another kind";
  EXPECT_EQ(table.generation(kStream, &stream), first) << "asked again, the same";
  table.adopt(kEvent, &event, 0);
  EXPECT_NE(table.generation(kEvent, &event), first);
  ASSERT_EQ(table.release(kStream, &stream), 0);
  EXPECT_EQ(table.generation(kStream, &stream), 0u);
  table.adopt(kStream, &stream, 0);
  EXPECT_GT(table.generation(kStream, &stream), first);
}

TEST_F(HandleTableTest, a_device_reset_forgets_that_devices_streams_and_events_and_every_pool) {
  HandleTable table;
  const int a = 0, b = 0, c = 0, pool = 0;
  table.adopt(kStream, &a, 0);
  table.adopt(kEvent, &b, 0);
  table.adopt(kStream, &c, 1);
  table.adopt(kMemPool, &pool, 1);
  table.forget_owner(0, uint64_t{1} << kMemPool);
  EXPECT_FALSE(table.holds(kStream, &a));
  EXPECT_FALSE(table.holds(kEvent, &b));
  EXPECT_TRUE(table.holds(kStream, &c));
  EXPECT_FALSE(table.holds(kMemPool, &pool));
}

TEST_F(HandleTableTest, only_held_handles_and_the_runtimes_own_pass) {
  const auto stream = made_up<cudaStream_t>(0x5000);
  const auto event = made_up<cudaEvent_t>(0x6000);
  const auto pool = made_up<cudaMemPool_t>(0x7000);
  EXPECT_EQ(vet(stream), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(vet(event), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(vet(pool), cudaErrorInvalidResourceHandle);
  session_handles().adopt(kStream, stream, 0);
  session_handles().adopt(kEvent, event, 0);
  session_handles().adopt(kMemPool, pool, 0);
  EXPECT_EQ(vet(stream), cudaSuccess);
  EXPECT_EQ(vet(event), cudaSuccess);
  EXPECT_EQ(vet(pool), cudaSuccess);
  // A stream's address named as an event is still refused.
  EXPECT_EQ(vet(made_up<cudaEvent_t>(0x5000)), cudaErrorInvalidResourceHandle);
  for (cudaStream_t own : {cudaStream_t{nullptr}, cudaStreamLegacy, cudaStreamPerThread}) {
    EXPECT_EQ(vet(own), cudaSuccess);
  }
  EXPECT_EQ(vet(cudaEvent_t{nullptr}), cudaSuccess);  // the runtime itself refuses null
}

TEST_F(HandleTableTest, a_destroy_takes_the_handle_out_and_puts_it_back_if_it_fails) {
  const auto stream = made_up<cudaStream_t>(0x5000);
  session_handles().adopt(kStream, stream, 3);
  {
    auto release = cudart::release(stream);
    EXPECT_EQ(release.vetted(), cudaSuccess);
    // While the destroy runs, the address is free: another thread may be handed it anew.
    EXPECT_FALSE(session_handles().holds(kStream, stream));
  }  // not destroyed: back in the table
  EXPECT_EQ(vet(stream), cudaSuccess);
  {
    auto release = cudart::release(stream);
    release.destroyed();
  }
  EXPECT_EQ(vet(stream), cudaErrorInvalidResourceHandle);
  auto twice = cudart::release(stream);
  EXPECT_EQ(twice.vetted(), cudaErrorInvalidResourceHandle);
}

TEST_F(HandleTableTest, a_rejection_is_the_last_error_until_read_or_overtaken_by_the_runtime) {
  begin_vetted_call();
  EXPECT_EQ(vet(made_up<cudaStream_t>(0x5000)), cudaErrorInvalidResourceHandle);
  end_vetted_call(cudaErrorInvalidResourceHandle);
  EXPECT_EQ(merge_last_error(cudaSuccess, false), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(merge_last_error(cudaSuccess, true), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(merge_last_error(cudaSuccess, true), cudaSuccess);

  begin_vetted_call();
  (void)vet(made_up<cudaStream_t>(0x5000));
  end_vetted_call(cudaErrorInvalidResourceHandle);
  begin_vetted_call();
  end_vetted_call(cudaSuccess);  // a later success leaves the error, as natively
  EXPECT_EQ(merge_last_error(cudaSuccess, false), cudaErrorInvalidResourceHandle);
  begin_vetted_call();
  end_vetted_call(cudaErrorInvalidValue);  // a later failure of the runtime's own is newer
  EXPECT_EQ(merge_last_error(cudaErrorInvalidValue, true), cudaErrorInvalidValue);
}

TEST_F(HandleTableTest, shared_memory_is_device_side_and_this_processs_own_memory_never_is) {
  std::vector<std::byte> shared(1 << 16);
  set_shared_memory(shared);
  EXPECT_EQ(vet_device_pointer(shared.data(), shared.size()), cudaSuccess);
  EXPECT_EQ(vet_device_pointer(nullptr, 64), cudaSuccess);  // the runtime refuses null itself
  int ours = 0;
  // With a GPU the runtime knows this as host memory: cudaErrorInvalidValue. Without a driver it
  // cannot say, and its own error comes back. Never success.
  const cudaError_t own = vet_device_pointer(&ours, sizeof ours);
  EXPECT_NE(own, cudaSuccess);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    EXPECT_EQ(own, cudaErrorInvalidValue);
  }
  // A range that starts in shared memory and ends outside it is checked at both ends.
  EXPECT_NE(vet_device_pointer(shared.data() + shared.size() - 8, 4096), cudaSuccess);
  EXPECT_EQ(vet_device_pointer(reinterpret_cast<void*>(UINTPTR_MAX - 8), 64),
            cudaErrorInvalidValue);
  set_shared_memory({});
}

}  // namespace
}  // namespace gvirtus::cudart

// Staging blocks (backend/services/staging_blocks.h) against a client that sends what no stub
// would: a block of no bytes or beyond the session's bound is refused with the driver's status; a
// block starts zeroed (nothing of the backend's earlier memory reaches the client) and takes and
// gives back what is written; a transfer that strays outside every block, or names none, or no
// bytes, ends only its own session.
#include "backend/services/staging_blocks.h"
#include "hostile_driver.h"

#include <algorithm>

namespace gvirtus::testing {

// The fixture's own call, for the staging rows.
#define ALLOCATE_STAGING                                         \
  [](Client& client, uint64_t bytes) {                           \
    return call(client, cu::Fn::gvirtusStagingAlloc,             \
                [&](WireWriter& w) { w.put<uint64_t>(bytes); }); \
  }

TEST_F(HostileDriver, staging_blocks_are_bounded_and_start_zeroed) {
  const auto allocate = ALLOCATE_STAGING;
  const auto owned = client();
  Client& c = *owned;
  EXPECT_EQ(allocate(c, 0).status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(allocate(c, services::kMaxStagingBytes + 1).status, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(backend_.logged("staging block")) << backend_.log();
  const Reply made = allocate(c, 4000);
  ASSERT_EQ(made.status, CUDA_SUCCESS);
  ASSERT_EQ(made.rest.size(), sizeof(uint64_t));
  uint64_t block = 0;
  std::memcpy(&block, made.rest.data(), sizeof block);
  EXPECT_NE(block, 0u);
  const auto read = [&](uint64_t at, uint64_t bytes) {
    return call(c, cu::Fn::gvirtusStagingRead, [&](WireWriter& w) {
      w.put<uint64_t>(at);
      w.put<uint64_t>(bytes);
    });
  };
  const Reply fresh = read(block, 4096);  // the block is whole pages
  ASSERT_EQ(fresh.status, CUDA_SUCCESS);
  ASSERT_EQ(fresh.rest.size(), sizeof(uint64_t) + 4096);
  EXPECT_TRUE(std::all_of(fresh.rest.begin() + sizeof(uint64_t), fresh.rest.end(),
                          [](std::byte b) { return b == std::byte{0}; }));
  const char text[] = "staged bytes";
  EXPECT_EQ(call(c, cu::Fn::gvirtusStagingWrite,
                 [&](WireWriter& w) {
                   w.put<uint64_t>(block + 100);
                   w.put<uint64_t>(sizeof text);
                   w.put_raw(text, sizeof text);
                 })
                .status,
            CUDA_SUCCESS);
  const Reply back = read(block + 100, sizeof text);
  ASSERT_EQ(back.status, CUDA_SUCCESS);
  ASSERT_EQ(back.rest.size(), sizeof(uint64_t) + sizeof text);
  EXPECT_EQ(std::memcmp(back.rest.data() + sizeof(uint64_t), text, sizeof text), 0);
  // The session's bound counts what it holds: the rest of it still fits, and no more.
  EXPECT_EQ(allocate(c, services::kMaxStagingBytes - 4096 + 1).status, CUDA_ERROR_OUT_OF_MEMORY);
  expect_session_goes_on(c);
}

TEST_F(HostileDriver, a_staging_transfer_outside_its_blocks_ends_only_its_session) {
  const std::vector<std::pair<uint64_t, uint64_t>> strays = {
      {4090, 16},                    // across the block's end
      {uint64_t{1} << 47, 16},       // no block there
      {0, 0},                        // no bytes
      {0, staging::kChunkBytes + 1}  // over a chunk
  };
  const auto allocate = ALLOCATE_STAGING;
  // A block of 4096 bytes in the session of `c`: its device address.
  const auto block_in = [&](Client& c) {
    const Reply made = allocate(c, 4096);
    EXPECT_EQ(made.status, CUDA_SUCCESS);
    uint64_t block = 0;
    if (made.rest.size() >= sizeof block) std::memcpy(&block, made.rest.data(), sizeof block);
    return block;
  };
  for (const auto& [offset, bytes] : strays) {
    const auto owned = client();
    Client& c = *owned;
    const uint64_t block = block_in(c);
    ASSERT_NE(block, 0u);
    const uint64_t at = offset >= (uint64_t{1} << 47) ? offset : block + offset;
    const Reply r = call(c, cu::Fn::gvirtusStagingRead, [&](WireWriter& w) {
      w.put<uint64_t>(at);
      w.put<uint64_t>(bytes);
    });
    EXPECT_EQ(r.error, ErrorKind::kDisconnected) << offset << " + " << bytes;
    expect_session_ended_alone(c);
  }
  const auto owned = client();
  Client& c = *owned;
  const uint64_t block = block_in(c);
  ASSERT_NE(block, 0u);
  const std::vector<std::byte> bytes(16);
  const Reply r = call(c, cu::Fn::gvirtusStagingWrite, [&](WireWriter& w) {
    w.put<uint64_t>(block + 4090);
    w.put<uint64_t>(bytes.size());
    w.put_raw(bytes.data(), bytes.size());
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

}  // namespace gvirtus::testing

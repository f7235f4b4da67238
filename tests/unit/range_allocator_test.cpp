// The first-fit range allocator behind the shm arena's page-locked blocks.
#include "common/range_allocator.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace gvirtus {
namespace {

TEST(RangeAllocator, rounds_to_the_alignment_and_fills_from_the_start) {
  RangeAllocator a(10 * 4096 + 100);  // the partial unit at the end is not usable
  EXPECT_EQ(a.capacity(), 10u * 4096);
  const auto r1 = a.take(1);
  const auto r2 = a.take(4097);
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->offset, 0u);
  EXPECT_EQ(r1->bytes, 4096u);
  EXPECT_EQ(r2->offset, 4096u);
  EXPECT_EQ(r2->bytes, 8192u);
  EXPECT_EQ(a.free_bytes(), 7u * 4096);
}

TEST(RangeAllocator, refuses_what_does_not_fit_and_nothing_is_lost) {
  RangeAllocator a(4 * 4096);
  EXPECT_FALSE(a.take(0));
  EXPECT_FALSE(a.take(5 * 4096));
  EXPECT_FALSE(a.take(~uint64_t{0}));  // no overflow in the rounding
  ASSERT_TRUE(a.take(3 * 4096));
  EXPECT_FALSE(a.take(2 * 4096));
  EXPECT_TRUE(a.take(4096));
  EXPECT_EQ(a.free_bytes(), 0u);
}

TEST(RangeAllocator, freed_neighbours_merge_so_a_large_block_fits_again) {
  RangeAllocator a(8 * 4096);
  std::vector<RangeAllocator::Range> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(*a.take(4096));
  EXPECT_FALSE(a.take(4096));
  // Free in an order that merges on both sides.
  for (int i : {1, 3, 2, 0, 7, 5, 6, 4}) EXPECT_TRUE(a.give_back(blocks[i].offset));
  EXPECT_EQ(a.free_ranges(), 1u);
  const auto whole = a.take(8 * 4096);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->offset, 0u);
}

TEST(RangeAllocator, give_back_only_accepts_starts_of_live_ranges) {
  RangeAllocator a(8 * 4096);
  const auto r = a.take(2 * 4096);
  EXPECT_FALSE(a.give_back(r->offset + 4096));
  EXPECT_TRUE(a.give_back(r->offset));
  EXPECT_FALSE(a.give_back(r->offset));  // twice
}

TEST(RangeAllocator, find_names_the_range_holding_a_span_and_nothing_outside) {
  RangeAllocator a(8 * 4096);
  (void)a.take(4096);
  const auto r = a.take(2 * 4096);  // [4096, 12288)
  auto found = a.find(4096 + 10, 100);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->offset, r->offset);
  EXPECT_TRUE(a.find(4096, 2 * 4096));
  EXPECT_FALSE(a.find(4096, 2 * 4096 + 1));  // runs past the end
  EXPECT_FALSE(a.find(12288 - 1, 2));
  EXPECT_FALSE(a.find(20000, 1));  // free space
  EXPECT_FALSE(a.find(4096 + 10, ~uint64_t{0}));
}

TEST(RangeAllocator, random_takes_and_frees_never_overlap_and_all_space_returns) {
  RangeAllocator a(1024 * 4096);
  std::mt19937 rng(42);
  std::vector<RangeAllocator::Range> live;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      if (auto r = a.take((rng() % 16 + 1) * 4096 - rng() % 4096)) live.push_back(*r);
    } else {
      const size_t i = rng() % live.size();
      ASSERT_TRUE(a.give_back(live[i].offset));
      live[i] = live.back();
      live.pop_back();
    }
  }
  std::sort(live.begin(), live.end(), [](auto& x, auto& y) { return x.offset < y.offset; });
  uint64_t used = 0;
  for (size_t i = 0; i < live.size(); ++i) {
    used += live[i].bytes;
    if (i > 0) {
      EXPECT_LE(live[i - 1].offset + live[i - 1].bytes, live[i].offset);
    }
  }
  EXPECT_EQ(used + a.free_bytes(), a.capacity());
  for (const auto& r : live) a.give_back(r.offset);
  EXPECT_EQ(a.free_ranges(), 1u);
  EXPECT_EQ(a.free_bytes(), a.capacity());
}

}  // namespace
}  // namespace gvirtus

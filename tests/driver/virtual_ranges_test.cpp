// VirtualRanges (src/plugins/cuda/common/virtual_ranges.h), which the stub and the backend both
// keep: reservations never overlap, mappings lie inside one reservation and never overlap, an
// unmap takes whole mappings only, and adjacent mappings form one usable run.
#include <gtest/gtest.h>

#include "plugins/cuda/common/virtual_ranges.h"

namespace gvirtus::cuda {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kPage = 2 << 20;

TEST(VirtualRanges, reservations_do_not_overlap_and_free_only_whole_and_unmapped) {
  VirtualRanges r;
  ASSERT_TRUE(r.reserve(kBase, 4 * kPage));
  EXPECT_FALSE(r.reserve(kBase + kPage, kPage));
  EXPECT_FALSE(r.reserve(kBase - kPage, 2 * kPage));
  EXPECT_FALSE(r.reserve(kBase, 0));
  EXPECT_FALSE(r.reserve(UINT64_MAX - 10, 100)) << "wraps around";
  EXPECT_EQ(r.reservation_of(kBase + kPage, kPage), kBase);
  EXPECT_FALSE(r.reservation_of(kBase + 3 * kPage, 2 * kPage)) << "runs past the reservation";
  ASSERT_TRUE(r.map(kBase, kPage));
  EXPECT_FALSE(r.release(kBase, 4 * kPage)) << "still mapped";
  ASSERT_TRUE(r.unmap(kBase, kPage));
  EXPECT_FALSE(r.release(kBase, 2 * kPage)) << "not as reserved";
  EXPECT_TRUE(r.release(kBase, 4 * kPage));
  EXPECT_FALSE(r.reservation_of(kBase, kPage));
}

TEST(VirtualRanges, mappings_stay_inside_a_reservation_and_apart) {
  VirtualRanges r;
  ASSERT_TRUE(r.reserve(kBase, 4 * kPage));
  EXPECT_FALSE(r.map(kBase - kPage, 2 * kPage));
  EXPECT_FALSE(r.map(kBase + 3 * kPage, 2 * kPage));
  ASSERT_TRUE(r.map(kBase + kPage, kPage));
  EXPECT_FALSE(r.map(kBase, 2 * kPage)) << "overlaps the mapping";
  EXPECT_FALSE(r.map(kBase + kPage + 4096, 4096));
}

TEST(VirtualRanges, adjacent_mappings_form_one_run_and_unmap_whole) {
  VirtualRanges r;
  ASSERT_TRUE(r.reserve(kBase, 4 * kPage));
  ASSERT_TRUE(r.map(kBase, kPage));
  ASSERT_TRUE(r.map(kBase + kPage, kPage));
  ASSERT_TRUE(r.map(kBase + 3 * kPage, kPage));
  EXPECT_TRUE(r.mapped(kBase + kPage / 2, kPage)) << "across the seam";
  EXPECT_FALSE(r.mapped(kBase + kPage, 2 * kPage)) << "into the gap";
  EXPECT_EQ(r.runs(kBase),
            (std::vector<VirtualRanges::Run>{{kBase, 2 * kPage}, {kBase + 3 * kPage, kPage}}));
  EXPECT_FALSE(r.unmap(kBase + 4096, kPage)) << "starts inside a mapping";
  EXPECT_FALSE(r.unmap(kBase, kPage + 4096)) << "cuts the second mapping";
  EXPECT_FALSE(r.unmap(kBase + 2 * kPage, kPage)) << "no mapping there";
  ASSERT_TRUE(r.unmap(kBase, 2 * kPage));
  EXPECT_EQ(r.runs(kBase), (std::vector<VirtualRanges::Run>{{kBase + 3 * kPage, kPage}}));
  EXPECT_FALSE(r.mapped(kBase, 1));
}

}  // namespace
}  // namespace gvirtus::cuda

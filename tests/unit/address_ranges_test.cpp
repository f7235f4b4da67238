// The ranges a stub knows (common/address_ranges.h): found by any address inside them, and - for
// the device allocations a stub notes by its allocation clock - forgotten by a free only when they
// were noted before the free was sent, so that an allocation another thread is handed at the
// freed address, and notes first, survives the free's late note.
#include "common/address_ranges.h"

#include <gtest/gtest.h>

namespace gvirtus {
namespace {

const void* at(uintptr_t address) {
  return reinterpret_cast<const void*>(address);
}

TEST(AddressRanges, a_range_is_found_by_any_address_inside_it) {
  AddressRanges ranges;
  ranges.add(at(0x1000), 0x100, 7, 2);
  const auto found = ranges.find(at(0x10ff));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->start, 0x1000u);
  EXPECT_EQ(found->flags, 7u);
  EXPECT_EQ(found->device, 2);
  EXPECT_FALSE(ranges.find(at(0x1100)).has_value());
  EXPECT_TRUE(ranges.overlaps(at(0x0f00), 0x101));
  EXPECT_FALSE(ranges.overlaps(at(0x0f00), 0x100));
}

TEST(AddressRanges, a_free_forgets_only_what_was_noted_before_it_was_sent) {
  AddressRanges ranges;
  ranges.add(at(0x1000), 0x100, 0, -1, /*noted=*/1);
  const uint64_t clock_at_free = 1;  // read before the free is sent
  // The backend frees 0x1000 and hands it to another thread's allocation, noted at once.
  ranges.add(at(0x1000), 0x40, 0, -1, /*noted=*/2);
  EXPECT_FALSE(ranges.remove_noted_by(at(0x1000), clock_at_free));
  ASSERT_TRUE(ranges.find(at(0x1000)).has_value());
  EXPECT_EQ(ranges.find(at(0x1000))->bytes, 0x40u) << "the new allocation stays";
  // Its own free, later, forgets it.
  EXPECT_TRUE(ranges.remove_noted_by(at(0x1000), 2));
  EXPECT_FALSE(ranges.find(at(0x1000)).has_value());
  EXPECT_FALSE(ranges.remove_noted_by(at(0x1000), 5)) << "nothing left to forget";
}

}  // namespace
}  // namespace gvirtus

// What both stubs share for graph copies of the program's own memory (common/staged_copies.h): a
// side's region from CUDA's description of it, and the host copy a copy node between two such
// sides runs as - row by row, each side by its own pitch, the gaps between rows untouched; one
// per pair of regions, kept for the process.
#include "common/staged_copies.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gvirtus::staging {
namespace {

// No staging row is ever called by what these tests do.
int no_allocate(uint64_t, uint64_t&) {
  return 1;
}
int no_write(uint64_t, const std::byte*, uint64_t) {
  return 1;
}
int no_read(uint64_t, std::byte*, uint64_t) {
  return 1;
}

Staging& staging() {
  static Staging kept(Calls{no_allocate, no_write, no_read});
  return kept;
}

std::vector<std::byte> numbered(size_t bytes) {
  std::vector<std::byte> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>(i * 7 + 1);
  return v;
}

TEST(StagedRegions, a_side_spans_its_rows_and_slices_from_its_position) {
  std::vector<std::byte> memory(4096);
  Region r{};
  // 3 slices of 4 rows of 10 bytes, rows 16 apart, slices 5 rows tall, from (2, 1, 1).
  ASSERT_TRUE(region_of(memory.data(), 2, 1, 1, 16, 5, 10, 4, 3, r));
  EXPECT_EQ(r.first, memory.data() + 2 + 16 + 16 * 5);
  EXPECT_EQ(r.pitch, 16u);
  EXPECT_EQ(r.slice, 80u);
  EXPECT_EQ(r.span(), 2 * 80u + 3 * 16u + 10u);
  EXPECT_FALSE(r.contiguous());
  // One row: its pitch does not matter, and it is contiguous.
  ASSERT_TRUE(region_of(memory.data(), 0, 0, 0, 0, 0, 100, 1, 1, r));
  EXPECT_EQ(r.span(), 100u);
  EXPECT_TRUE(r.contiguous());
}

TEST(StagedRegions, shapes_cuda_refuses_have_no_region) {
  std::vector<std::byte> memory(64);
  Region r{};
  EXPECT_FALSE(region_of(nullptr, 0, 0, 0, 8, 1, 8, 1, 1, r));        // no memory
  EXPECT_FALSE(region_of(memory.data(), 0, 0, 0, 8, 1, 0, 1, 1, r));  // an empty extent
  EXPECT_FALSE(region_of(memory.data(), 0, 0, 0, 4, 2, 8, 2, 1, r));  // rows wider than pitch
  EXPECT_FALSE(region_of(memory.data(), 0, 0, 0, 8, 1, 8, 2, 2, r));  // slices taller than height
  const void* top = reinterpret_cast<const void*>(UINTPTR_MAX - 8);
  EXPECT_FALSE(region_of(top, 0, 0, 0, 0, 0, 16, 1, 1, r));  // past the end of the address space
}

TEST(HostCopies, a_linear_copy_moves_its_bytes_and_no_more) {
  const std::vector<std::byte> from = numbered(1000);
  std::vector<std::byte> to(1004, std::byte{0xee});
  Region source{}, destination{};
  ASSERT_TRUE(region_of(from.data(), 0, 0, 0, 0, 0, 1000, 1, 1, source));
  ASSERT_TRUE(region_of(to.data() + 2, 0, 0, 0, 0, 0, 1000, 1, 1, destination));
  const HostCopy* copy = staging().host_copy_for(source, destination);
  run_host_copy(const_cast<HostCopy*>(copy));
  EXPECT_TRUE(std::equal(from.begin(), from.end(), to.begin() + 2));
  EXPECT_EQ(to[0], std::byte{0xee});
  EXPECT_EQ(to[1], std::byte{0xee});
  EXPECT_EQ(to[1002], std::byte{0xee});
  EXPECT_EQ(to[1003], std::byte{0xee});
}

TEST(HostCopies, pitched_volumes_copy_row_by_row_and_keep_their_gaps) {
  // 2 slices of 3 rows of 5 bytes: from rows 5 apart (packed), into rows 8 apart in slices 4 rows
  // tall, at position (1, 1, 0).
  constexpr size_t kWidth = 5, kRows = 3, kSlices = 2, kPitch = 8, kHeight = 4;
  const std::vector<std::byte> from = numbered(kWidth * kRows * kSlices);
  std::vector<std::byte> to(kPitch * kHeight * kSlices, std::byte{0xee});
  Region source{}, destination{};
  ASSERT_TRUE(region_of(from.data(), 0, 0, 0, kWidth, kRows, kWidth, kRows, kSlices, source));
  ASSERT_TRUE(region_of(to.data(), 1, 1, 0, kPitch, kHeight, kWidth, kRows, kSlices, destination));
  run_host_copy(const_cast<HostCopy*>(staging().host_copy_for(source, destination)));
  for (size_t z = 0; z < kSlices; ++z) {
    for (size_t y = 0; y < kHeight; ++y) {
      for (size_t x = 0; x < kPitch; ++x) {
        const std::byte got = to[(z * kHeight + y) * kPitch + x];
        const bool inside = y >= 1 && y < 1 + kRows && x >= 1 && x < 1 + kWidth;
        const std::byte want =
            inside ? from[(z * kRows + (y - 1)) * kWidth + (x - 1)] : std::byte{0xee};
        ASSERT_EQ(got, want) << "slice " << z << " row " << y << " byte " << x;
      }
    }
  }
}

TEST(HostCopies, one_per_pair_of_regions_kept_for_the_process) {
  std::vector<std::byte> a(64), b(64), c(64);
  Region ra{}, rb{}, rc{};
  ASSERT_TRUE(region_of(a.data(), 0, 0, 0, 0, 0, 64, 1, 1, ra));
  ASSERT_TRUE(region_of(b.data(), 0, 0, 0, 0, 0, 64, 1, 1, rb));
  ASSERT_TRUE(region_of(c.data(), 0, 0, 0, 0, 0, 64, 1, 1, rc));
  const HostCopy* first = staging().host_copy_for(ra, rb);
  EXPECT_EQ(staging().host_copy_for(ra, rb), first);  // the same pair: the same copy
  EXPECT_NE(staging().host_copy_for(ra, rc), first);
  EXPECT_NE(staging().host_copy_for(rb, ra), first);  // the other way round is another copy
}

TEST(Sides, say_which_sides_are_here) {
  EXPECT_FALSE(Sides{}.any());
  EXPECT_TRUE((Sides{true, false}.any()));
  EXPECT_FALSE((Sides{true, false}.both()));
  EXPECT_TRUE((Sides{true, true}.both()));
  EXPECT_NE((Sides{true, false}), (Sides{false, true}));
}

}  // namespace
}  // namespace gvirtus::staging

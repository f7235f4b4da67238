// Records (common/wire_record.h): a layout described once encodes and decodes field by field in
// the generated calls' marshalling, and a truncated record or an enum out of range is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>

#include "common/wire_record.h"

enum Colour { kRed = 0, kGreen = 1, kBlue = 2 };

template <>
struct gvirtus::marshal::EnumRange<Colour> {
  static constexpr long long kSmallest = 0, kLargest = 2;
};

namespace gvirtus {
namespace {

struct Dims {
  uint32_t x, y;
};

struct Sample {
  void* pointer;
  uint64_t count;
  Colour colour;
  Dims dims;
  int32_t signed_value;
  static constexpr auto kFields = std::tuple{&Sample::pointer, &Sample::count, &Sample::colour,
                                             &Sample::dims, &Sample::signed_value};
};

TEST(WireRecord, round_trips_every_field_in_order) {
  WireWriter out;
  put_record(out, Sample{reinterpret_cast<void*>(0x1234), 77, kBlue, {3, 4}, -5});
  EXPECT_EQ(out.size(), 8u + 8 + 4 + 8 + 4);
  WireReader in(out.view(), "sample");
  EXPECT_EQ(in.get<uint64_t>(), 0x1234u);  // the first field first, as a u64
  WireReader again(out.view(), "sample");
  const Sample back = get_record<Sample>(again);
  again.expect_end();
  EXPECT_EQ(back.pointer, reinterpret_cast<void*>(0x1234));
  EXPECT_EQ(back.count, 77u);
  EXPECT_EQ(back.colour, kBlue);
  EXPECT_EQ(back.dims.x, 3u);
  EXPECT_EQ(back.dims.y, 4u);
  EXPECT_EQ(back.signed_value, -5);
}

TEST(WireRecord, a_truncated_record_is_refused) {
  WireWriter out;
  put_record(out, Sample{nullptr, 1, kRed, {0, 0}, 0});
  WireReader in(out.view().first(out.size() - 1), "sample");
  try {
    (void)get_record<Sample>(in);
    FAIL() << "a truncated record was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
  }
}

TEST(WireRecord, an_enum_outside_its_range_is_refused) {
  WireWriter out;
  out.put<uint64_t>(0);
  out.put<uint64_t>(1);
  out.put<uint32_t>(4);  // Colour holds 0..3 (two bits)
  out.put<uint64_t>(0);
  out.put<int32_t>(0);
  WireReader in(out.view(), "sample");
  try {
    (void)get_record<Sample>(in);
    FAIL() << "an enum out of range was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("outside the range"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gvirtus

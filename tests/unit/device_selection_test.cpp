// Device selections (common/device_selection.h): CUDA_VISIBLE_DEVICES's syntax, parsed strictly
// (a mistyped selection is an error naming where it came from, never a quiet subset), and
// composed with the backend's own CUDA_VISIBLE_DEVICES by position.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/device_selection.h"
#include "common/error.h"

namespace gvirtus {
namespace {

using ::testing::HasSubstr;
using Devices = std::vector<uint32_t>;

std::string parse_error(const std::string& text) {
  try {
    parse_device_selection(text, "GVIRTUS_VISIBLE_DEVICES");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST(DeviceSelection, indexes_in_the_order_given) {
  EXPECT_EQ(parse_device_selection("2,0,3", "x"), Devices({2, 0, 3}));
  EXPECT_EQ(parse_device_selection(" 1 , 0 ", "x"), Devices({1, 0}));
  EXPECT_EQ(parse_device_selection("7", "x"), Devices({7}));
  EXPECT_EQ(parse_device_selection("", "x"), std::nullopt) << "empty: every device";
  EXPECT_EQ(parse_device_selection("  ", "x"), std::nullopt);
  EXPECT_EQ(format_device_selection({2, 0, 3}), "2,0,3");
  EXPECT_EQ(parse_device_selection(" none ", "x"), Devices{}) << "no device at all";
  EXPECT_EQ(format_device_selection({}), "none");
}

TEST(DeviceSelection, a_malformed_selection_is_an_error_naming_its_source) {
  EXPECT_THAT(parse_error("0,x"),
              HasSubstr("GVIRTUS_VISIBLE_DEVICES: \"0,x\": \"x\" is not an index"));
  EXPECT_THAT(parse_error("0,,1"), HasSubstr("an empty entry"));
  EXPECT_THAT(parse_error("1,"), HasSubstr("an empty entry"));
  EXPECT_THAT(parse_error("-1"), HasSubstr("\"-1\" is not an index"));
  EXPECT_THAT(parse_error("GPU-8f3c"), HasSubstr("is not an index"));
  EXPECT_THAT(parse_error("none,1"), HasSubstr("\"none\" is not an index"));
  EXPECT_THAT(parse_error("1,2,1"), HasSubstr("device 1 is named twice"));
  EXPECT_THAT(parse_error("99999999999"), HasSubstr("is not an index"));
  std::string many;
  for (int i = 0; i <= static_cast<int>(kMaxSelectedDevices); ++i) {
    many += (i ? "," : "") + std::to_string(i);
  }
  EXPECT_THAT(parse_error(many), HasSubstr("more than 64 devices"));
  EXPECT_THAT(parse_error(std::string(kMaxSelectionText + 1, '1')), HasSubstr("longer than 1024"));
}

TEST(DeviceSelection, composes_with_the_backends_own_list_by_position) {
  EXPECT_EQ(compose_visible_devices(nullptr, {2, 0}), "2,0");
  EXPECT_EQ(compose_visible_devices("", {2, 0}), "2,0");
  EXPECT_EQ(compose_visible_devices("4,5,6", {2, 0}), "6,4");
  EXPECT_EQ(compose_visible_devices("GPU-aaa, MIG-bbb", {1}), "MIG-bbb");
  EXPECT_EQ(compose_visible_devices(nullptr, {}), "") << "none: CUDA sees no device";
  EXPECT_EQ(compose_visible_devices("4,5", {}), "");
  try {
    compose_visible_devices("4,5", {2});
    ADD_FAILURE() << "a position beyond the backend's list";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("device 2 was selected, but this backend offers 2"));
  }
}

}  // namespace
}  // namespace gvirtus

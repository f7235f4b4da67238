// The simulated device's reading of a PTX text's module variables (simulated/ptx_variables.h):
// sizes from types and dimensions, managed variables' attribute taken in its stride, and initial
// values from numeric initializers - integers (negative, hex), floats decimal and as bit
// patterns, arrays in braces - while an initializer of anything else leaves the variable zeroed.
#include "plugins/cuda/simulated/ptx_variables.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

namespace gvirtus::sim {
namespace {

std::map<std::string, fatbin::Variable> read(std::string_view ptx) {
  std::map<std::string, fatbin::Variable> out;
  for (auto& v : ptx_variables(ptx)) out.emplace(v.name, v);
  return out;
}

template <typename T>
T first(const fatbin::Variable& v, size_t index = 0) {
  T value{};
  EXPECT_GE(v.initial.size(), (index + 1) * sizeof value) << v.name;
  if (v.initial.size() >= (index + 1) * sizeof value) {
    std::memcpy(&value, v.initial.data() + index * sizeof value, sizeof value);
  }
  return value;
}

TEST(PtxVariables, sizes_and_initial_values_come_from_the_declarations) {
  const auto vars = read(
      ".version 8.0\n"
      ".global .attribute(.managed) .align 4 .b8 counter[16];\n"
      ".global .attribute(.managed) .align 4 .f32 scale = 0f40200000;\n"
      ".visible .global .align 8 .u64 big = 0x100000000;\n"
      ".global .align 4 .s32 minus = -5;\n"
      ".const .align 8 .f64 half = 0d3FE0000000000000;\n"
      ".global .align 4 .f32 decimal = 1.5;\n"
      ".global .align 4 .u32 table[4] = {1, 2, 3};\n"
      ".global .align 8 .u64 where = generic(table);\n"
      ".shared .align 4 .b8 scratch[64];\n");
  ASSERT_EQ(vars.count("counter"), 1u);
  EXPECT_EQ(vars.at("counter").bytes, 16u);
  EXPECT_TRUE(vars.at("counter").initial.empty()) << "no initializer: zeroed";
  EXPECT_EQ(first<float>(vars.at("scale")), 2.5f);
  EXPECT_EQ(first<uint64_t>(vars.at("big")), 0x100000000ull);
  EXPECT_EQ(first<int32_t>(vars.at("minus")), -5);
  EXPECT_EQ(first<double>(vars.at("half")), 0.5);
  EXPECT_EQ(first<float>(vars.at("decimal")), 1.5f);
  EXPECT_EQ(vars.at("table").bytes, 16u);
  EXPECT_EQ(first<uint32_t>(vars.at("table"), 2), 3u);
  EXPECT_EQ(vars.at("table").initial.size(), 12u) << "the fourth element is zero";
  EXPECT_EQ(vars.at("where").bytes, 8u);
  EXPECT_TRUE(vars.at("where").initial.empty()) << "an address: left zeroed";
  EXPECT_EQ(vars.count("scratch"), 0u) << "shared memory is no module variable";
}

TEST(PtxVariables, an_initializer_with_more_elements_than_the_variable_is_ignored) {
  const auto vars = read(".global .align 4 .u32 pair[2] = {1, 2, 3};\n");
  ASSERT_EQ(vars.count("pair"), 1u);
  EXPECT_TRUE(vars.at("pair").initial.empty());
}

}  // namespace
}  // namespace gvirtus::sim

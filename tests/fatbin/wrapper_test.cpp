// fatbin_from_wrapper(): on the wrapper a real nvcc-built object registers, and on hand-made ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "fatbin.h"
#include "fatbin/fake_cudart.h"
#include "fatbin/fatbin_files.h"

namespace gvirtus::fatbin::test {
namespace {

// The layout nvcc gives the wrapper (crt/host_runtime.h's __fatBinC_Wrapper_t).
struct Wrapper {
  uint32_t magic;
  uint32_t version;
  const void* data;
  const void* filename_or_fatbins;
};

void expect_invalid(const void* wrapper, const char* why) {
  try {
    fatbin_from_wrapper(wrapper);
    ADD_FAILURE() << "accepted: " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << why;
  }
}

TEST(fatbin_wrapper, registered_wrapper_yields_every_registered_kernel) {
  const void* wrapper = registered_wrapper();
  ASSERT_NE(wrapper, nullptr) << "kernels_registered.o did not call __cudaRegisterFatBinary";
  const auto fatbin = fatbin_from_wrapper(wrapper);
  const auto layouts = kernel_layouts(fatbin);
  std::vector<std::string> names;
  for (const auto& layout : layouts) names.push_back(layout.name);
  auto registered = registered_kernels();
  std::sort(registered.begin(), registered.end());
  EXPECT_EQ(names, registered);
  EXPECT_EQ(elf_archs(fatbin), std::vector<uint32_t>{90});
  // Same source, same layouts as the separately built fatbin variants.
  EXPECT_EQ(layouts, kernel_layouts(read_file(variant_path("no_compress"))));
}

TEST(fatbin_wrapper, hand_made_wrapper_spans_the_whole_file) {
  const auto bytes = read_file(variant_path("multi_arch"));
  ASSERT_FALSE(bytes.empty());
  const Wrapper wrapper{0x466243b1, 1, bytes.data(), nullptr};
  const auto fatbin = fatbin_from_wrapper(&wrapper);
  EXPECT_EQ(fatbin.data(), bytes.data());
  EXPECT_EQ(fatbin.size(), bytes.size());  // nvcc -fatbin writes exactly header + entries
}

TEST(fatbin_wrapper, bad_wrappers_are_invalid_input) {
  auto bytes = read_file(variant_path("no_compress"));
  ASSERT_FALSE(bytes.empty());
  expect_invalid(nullptr, "null wrapper");
  Wrapper bad_magic{0x12345678, 1, bytes.data(), nullptr};
  expect_invalid(&bad_magic, "wrapper magic");
  Wrapper bad_version{0x466243b1, 7, bytes.data(), nullptr};
  expect_invalid(&bad_version, "wrapper version");
  Wrapper no_data{0x466243b1, 1, nullptr, nullptr};
  expect_invalid(&no_data, "null data");
  // A fatbin whose header announces fewer bytes than its entries take.
  uint64_t size;
  std::memcpy(&size, bytes.data() + 8, 8);
  size -= 8;
  std::memcpy(bytes.data() + 8, &size, 8);
  Wrapper short_size{0x466243b1, 1, bytes.data(), nullptr};
  expect_invalid(&short_size, "entries overrun the announced size");
  const uint64_t huge = ~uint64_t{0} - 4;
  std::memcpy(bytes.data() + 8, &huge, 8);
  expect_invalid(&short_size, "size that overflows");
}

}  // namespace
}  // namespace gvirtus::fatbin::test

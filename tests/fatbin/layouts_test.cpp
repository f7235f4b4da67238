// kernel_layouts() against cuobjdump, for every fatbin variant of kernels.cu.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fatbin.h"
#include "fatbin/cuobjdump_reader.h"
#include "fatbin/fatbin_files.h"

namespace gvirtus::fatbin::test {
namespace {

constexpr size_t kKernelsInSource = 12;  // kernels.cu, template instances included

std::string quoted(const std::string& path) {
  return "'" + path + "'";
}

std::map<std::string, KernelLayout> by_name(const std::vector<KernelLayout>& layouts) {
  std::map<std::string, KernelLayout> out;
  for (const auto& layout : layouts) out[layout.name] = layout;
  return out;
}

// The cubins cuobjdump sees in a variant (empty for PTX-only ones).
std::vector<ElfTruth> elf_truth(const std::string& cuobjdump, const std::string& variant) {
  const auto text =
      run_command(quoted(cuobjdump) + " -elf " + quoted(variant_path(variant)) + " 2>/dev/null");
  return text ? parse_cuobjdump_elf(*text) : std::vector<ElfTruth>{};
}

class FatbinLayoutsMatchCuobjdump : public ::testing::TestWithParam<std::string> {};

TEST_P(FatbinLayoutsMatchCuobjdump, every_kernel_param_offset_size_and_total) {
  const auto cuobjdump = cuobjdump_path();
  if (cuobjdump.empty()) {
    GTEST_SKIP() << "no cuobjdump: CUDA 13 ships none; scripts/lib.sh installs it from PyPI "
                    "(nvidia-cuda-cuobjdump), or configure with -DGVIRTUS_CUOBJDUMP=<path>";
  }
  const auto bytes = read_file(variant_path(GetParam()));
  ASSERT_FALSE(bytes.empty()) << variant_path(GetParam());
  const auto layouts = by_name(kernel_layouts(bytes));
  ASSERT_EQ(layouts.size(), kKernelsInSource);

  auto elfs = elf_truth(cuobjdump, GetParam());
  if (elfs.empty()) {  // PTX only: the cubins of the same source are the ground truth
    elfs = elf_truth(cuobjdump, "multi_arch");
    EXPECT_TRUE(elf_archs(bytes).empty());
  } else {
    std::vector<uint32_t> archs;
    for (const auto& elf : elfs) archs.push_back(elf.sm_arch);
    EXPECT_EQ(elf_archs(bytes), archs);
  }
  ASSERT_FALSE(elfs.empty()) << "cuobjdump -elf printed no cubin";
  for (const auto& elf : elfs) {
    EXPECT_EQ(elf.kernels, layouts) << "sm_" << elf.sm_arch;
  }

  // Every kernel the PTX declares is listed (PTX is in every variant).
  const auto ptx =
      run_command(quoted(cuobjdump) + " -ptx " + quoted(variant_path(GetParam())) + " 2>/dev/null");
  ASSERT_TRUE(ptx.has_value());
  std::set<std::string> names;
  for (const auto& [name, layout] : layouts) names.insert(name);
  EXPECT_EQ(parse_cuobjdump_ptx_entries(*ptx), names);
}

INSTANTIATE_TEST_SUITE_P(fatbin, FatbinLayoutsMatchCuobjdump, ::testing::ValuesIn(variant_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gvirtus::fatbin::test

// The size of a module image by its own headers (plugins/cuda/common/module_image.h): what the
// stub sends, and what the backend checks a module image from the wire against.
#include "plugins/cuda/common/module_image.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

std::vector<unsigned char> fatbin(uint16_t header_size, uint64_t files_size, size_t actual) {
  std::vector<unsigned char> image(actual, 0);
  const uint32_t magic = 0xBA55ED50;
  const uint16_t version = 1;
  std::memcpy(image.data(), &magic, 4);
  std::memcpy(image.data() + 4, &version, 2);
  std::memcpy(image.data() + 6, &header_size, 2);
  std::memcpy(image.data() + 8, &files_size, 8);
  return image;
}

// An ELF64 header, its section headers at `shoff`, one PROGBITS section of `size` at `offset`.
std::vector<unsigned char> elf(uint64_t offset, uint64_t size, size_t actual) {
  std::vector<unsigned char> image(actual, 0);
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_shoff = sizeof header;
  header.e_shnum = 2;
  header.e_shentsize = sizeof(Elf64_Shdr);
  std::memcpy(image.data(), &header, sizeof header);
  Elf64_Shdr section{};
  section.sh_type = SHT_PROGBITS;
  section.sh_offset = offset;
  section.sh_size = size;
  std::memcpy(image.data() + sizeof header + sizeof(Elf64_Shdr), &section, sizeof section);
  return image;
}

TEST(ModuleImage, a_fatbinary_is_its_header_and_the_entries_it_frames) {
  const auto image = fatbin(16, 84, 100);
  EXPECT_EQ(module_image_size(image.data(), image.size()), 100u);
  EXPECT_EQ(module_image_size(image.data(), kMaxModuleImageBytes), 100u);
}

TEST(ModuleImage, a_fatbinary_that_claims_more_than_arrived_is_refused) {
  const auto image = fatbin(16, 1000, 100);
  EXPECT_EQ(module_image_size(image.data(), image.size()), 0u);
  const auto huge = fatbin(16, uint64_t{1} << 40, 100);
  EXPECT_EQ(module_image_size(huge.data(), kMaxModuleImageBytes), 0u) << "over the limit";
  const auto short_header = fatbin(8, 84, 100);
  EXPECT_EQ(module_image_size(short_header.data(), short_header.size()), 0u);
  EXPECT_EQ(module_image_size(image.data(), 12), 0u) << "a header cut short";
}

TEST(ModuleImage, a_cubin_ends_with_its_furthest_section_or_table) {
  const size_t tables = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Shdr);
  const auto image = elf(tables, 64, tables + 64);
  EXPECT_EQ(module_image_size(image.data(), image.size()), tables + 64);
  const auto tables_last = elf(sizeof(Elf64_Ehdr), 8, tables);
  EXPECT_EQ(module_image_size(tables_last.data(), tables_last.size()), tables);
}

TEST(ModuleImage, a_cubin_whose_section_lies_past_the_image_is_refused) {
  const size_t tables = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Shdr);
  const auto image = elf(tables, 4096, tables + 64);
  EXPECT_EQ(module_image_size(image.data(), image.size()), 0u);
  const auto wild = elf(uint64_t{1} << 62, 16, tables + 64);
  EXPECT_EQ(module_image_size(wild.data(), wild.size()), 0u);
  EXPECT_EQ(module_image_size(image.data(), sizeof(Elf64_Ehdr) + 4), 0u)
      << "section headers cut short";
}

TEST(ModuleImage, ptx_runs_to_its_nul) {
  const std::string ptx = ".version 9.0\n.target sm_90\n";
  EXPECT_EQ(module_image_size(ptx.c_str(), ptx.size() + 1), ptx.size() + 1);
  EXPECT_EQ(module_image_size(ptx.data(), ptx.size()), 0u) << "no NUL in what arrived";
  EXPECT_EQ(module_image_size(nullptr, 100), 0u);
}

}  // namespace
}  // namespace gvirtus::cuda

// Hostile input: every corruption must end in Error{kInvalidInput}, never a crash or an overread
// (run under ASan to check the latter: -DCMAKE_CXX_FLAGS=-fsanitize=address).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/error.h"
#include "common/wire.h"
#include "fatbin.h"
#include "fatbin/fatbin_files.h"
#include "fatbin_container.h"
#include "ptx_params.h"

namespace gvirtus::fatbin::test {
namespace {

// kernel_layouts() on a copy of `bytes` of exactly `size` bytes (so ASan sees any overread).
void expect_invalid(std::vector<std::byte> bytes, const std::string& why) {
  try {
    kernel_layouts(bytes);
    ADD_FAILURE() << "accepted: " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << why;
    EXPECT_TRUE(std::string_view(e.what()).starts_with("fatbin: ")) << e.what();
  }
}

template <typename T>
void poke(std::vector<std::byte>& bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

// Offset of the first entry of `kind` whose flags include `flag` (0: any), from the file start.
size_t entry_offset(const std::vector<std::byte>& bytes, EntryKind kind, uint64_t flag) {
  size_t at = 16;
  for (const auto& entry : fatbin_entries(bytes)) {
    if (entry.kind == static_cast<uint16_t>(kind) && (flag == 0 || (entry.flags & flag))) return at;
    at += load_le<uint32_t>(bytes.data() + at + 4) + load_le<uint64_t>(bytes.data() + at + 8);
  }
  ADD_FAILURE() << "no such entry";
  return 0;
}

std::vector<std::byte> variant(const std::string& name) {
  auto bytes = read_file(variant_path(name));
  EXPECT_FALSE(bytes.empty()) << variant_path(name);
  return bytes;
}

// Per-architecture libraries (CUTLASS's kernels) give one kernel different layouts in different
// ELF entries: the runtime stub, which packs one buffer for whichever code runs, refuses the
// fatbin; a driver-side reader takes the highest arch's layout.
TEST(fatbin_layouts, disagreeing_architectures_are_refused_or_resolved_by_policy) {
  const auto bytes = variant("arch_conflict");
  expect_invalid(bytes, "k_conflict's sm_75 and sm_90 layouts differ");
  const auto layouts = kernel_layouts(bytes, ArchConflicts::kHighestArch);
  ASSERT_EQ(layouts.size(), 1u);
  EXPECT_EQ(layouts[0].name, "_Z10k_conflict6ParamsPi");
  ASSERT_EQ(layouts[0].params.size(), 2u);
  EXPECT_EQ(layouts[0].params[0], (ParamInfo{0, 16}));  // sm_90's Params
  EXPECT_EQ(layouts[0].params[1], (ParamInfo{16, 8}));
  EXPECT_EQ(layouts[0].param_bytes, 24u);
}

TEST(fatbin_hostile, bad_magic_and_version) {
  auto bytes = variant("no_compress");
  poke<uint32_t>(bytes, 0, 0xdeadbeef);
  expect_invalid(bytes, "magic");
  bytes = variant("no_compress");
  poke<uint16_t>(bytes, 4, 9);
  expect_invalid(bytes, "version");
}

TEST(fatbin_hostile, every_truncation_is_rejected) {
  for (const char* name : {"no_compress", "compress_all", "compress_speed"}) {
    const auto bytes = variant(name);
    for (size_t size = 0; size < bytes.size(); size += size < 512 ? 1 : 61) {
      expect_invalid({bytes.begin(), bytes.begin() + size},
                     std::string(name) + " cut at " + std::to_string(size));
    }
  }
}

TEST(fatbin_hostile, sizes_that_overflow) {
  const auto good = variant("no_compress");
  const size_t elf = entry_offset(good, EntryKind::kElf, 0);
  auto bytes = good;
  poke<uint64_t>(bytes, 8, ~uint64_t{0} - 15);  // header + size wraps to 0
  expect_invalid(bytes, "fatbin size wraps");
  bytes = good;
  poke<uint32_t>(bytes, elf + 4, ~uint32_t{0});
  expect_invalid(bytes, "entry header size");
  bytes = good;
  poke<uint32_t>(bytes, elf + 4, 8);
  expect_invalid(bytes, "entry header shorter than its fields");
  bytes = good;
  poke<uint64_t>(bytes, elf + 8, ~uint64_t{0} - 32);
  expect_invalid(bytes, "entry payload size wraps");
  bytes = good;
  const size_t shoff = elf + 64 + 0x28;
  poke<uint64_t>(bytes, shoff, ~uint64_t{0} - 8);
  expect_invalid(bytes, "ELF section table offset");
  bytes = good;
  poke<uint16_t>(bytes, elf + 64 + 0x3c, 0xffff);
  expect_invalid(bytes, "ELF section count");
}

TEST(fatbin_hostile, corrupt_compressed_entries) {
  const auto zstd = variant("compress_all");
  const size_t z = entry_offset(zstd, EntryKind::kElf, kFlagCompressedZstd);
  auto bytes = zstd;
  poke<uint32_t>(bytes, z + load_le<uint32_t>(zstd.data() + z + 4),
                 0x12345678);  // the ZSTD frame magic
  expect_invalid(bytes, "ZSTD magic");
  bytes = zstd;
  poke<uint64_t>(bytes, z + 56, load_le<uint64_t>(bytes.data() + z + 56) + 1);
  expect_invalid(bytes, "ZSTD announced size");
  bytes = zstd;
  poke<uint64_t>(bytes, z + 56, uint64_t{1} << 40);
  expect_invalid(bytes, "ZSTD size above the limit");
  bytes = zstd;
  poke<uint32_t>(bytes, z + 16, load_le<uint32_t>(bytes.data() + z + 16) / 2);
  expect_invalid(bytes, "ZSTD data cut short");
  poke<uint64_t>(bytes, z + 40, load_le<uint64_t>(bytes.data() + z + 40) | kFlagCompressedLz4);
  expect_invalid(bytes, "both LZ4 and ZSTD");

  const auto lz4 = variant("ptx_only_speed");
  const size_t l = entry_offset(lz4, EntryKind::kPtx, kFlagCompressedLz4);
  bytes = lz4;
  poke<uint32_t>(bytes, l + 16, load_le<uint32_t>(bytes.data() + l + 16) / 2);
  expect_invalid(bytes, "LZ4 data cut short");
  bytes = lz4;
  poke<uint64_t>(bytes, l + 56, load_le<uint64_t>(bytes.data() + l + 56) + 100);
  expect_invalid(bytes, "LZ4 announced size");
  bytes = lz4;
  const size_t l_payload = l + load_le<uint32_t>(lz4.data() + l + 4);
  poke<uint8_t>(bytes, l_payload, 0x0f);  // no literals: the first match reaches before the output
  poke<uint16_t>(bytes, l_payload + 1, 0xffff);
  expect_invalid(bytes, "LZ4 match before the output");
}

// Random byte flips: the parser may accept (a flip in a padding byte) but must only ever throw
// gvirtus::Error; anything else (a crash, another exception) fails the test.
TEST(fatbin_hostile, random_corruption_throws_only_invalid_input) {
  std::mt19937 rng(20240613);
  for (const char* name : {"no_compress", "compress_all", "compress_speed", "ptx_only"}) {
    const auto good = variant(name);
    for (int round = 0; round < 400; ++round) {
      auto bytes = good;
      for (int flips = 1 + round % 4; flips > 0; --flips) {
        bytes[rng() % bytes.size()] = static_cast<std::byte>(rng());
      }
      try {
        kernel_layouts(bytes);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << name << ": " << e.what();
      }
    }
  }
}

TEST(fatbin_hostile, malformed_ptx_parameter_lists) {
  const auto invalid = [](std::string_view ptx) {
    EXPECT_THROW(ptx_kernel_layouts(ptx), Error) << ptx;
  };
  invalid(".entry k(.param .u32 a");
  invalid(".entry k(.param .align 3 .b8 a[4])");
  invalid(".entry k(.param .b8 a[99999999999999999999])");
  invalid(".entry k(.param .align 8 .b8 a[1048576], .param .u32 b)");
  invalid(".entry k(.param a)");
  invalid(".entry k(.u32 a)");
  invalid(".entry");
  const auto layouts = ptx_kernel_layouts(
      "// .entry commented(.param .u8 x)\n.visible .entry k(\n.param .u8 a, /* c */ "
      ".param .u64 .ptr .global .align 16 b,\n.param .align 4 .b8 c[6]\n)\n{ ret; }");
  ASSERT_EQ(layouts.size(), 1u);
  // The .align after .ptr is the pointee's: b stays at 8, like any .u64.
  EXPECT_EQ(layouts[0].params, (std::vector<ParamInfo>{{0, 1}, {8, 8}, {16, 6}}));
  EXPECT_EQ(layouts[0].param_bytes, 22u);
  // Entries are found between comments of both kinds, past lone slashes, as whole tokens only.
  const auto found = ptx_kernel_layouts(
      "/* .entry hidden(.param .u8 x) */ .file 1 \"a/b.cu\"\n.entryway\n.entry one(.param .u32 "
      "a)\n{ ret; } // .entry two(.param .u8 x)\n.visible .entry three()\n{ ret; }");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].name, "one");
  EXPECT_EQ(found[0].param_bytes, 4u);
  EXPECT_EQ(found[1].name, "three");
  EXPECT_EQ(found[1].param_bytes, 0u);
}

}  // namespace
}  // namespace gvirtus::fatbin::test

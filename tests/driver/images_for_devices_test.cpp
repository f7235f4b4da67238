// A fatbinary cut down to what the backend's devices run
// (plugins/cuda/frontend/images_for_devices.h): by CUDA's rules of binary compatibility, entries
// are dropped whole and kept as they were stored.
#include "plugins/cuda/frontend/images_for_devices.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "fatbin_container.h"

namespace gvirtus::cuda {
namespace {

enum Kind : uint16_t { kPtx = 1, kElf = 2, kOther = 4 };

// A fatbinary of entries (kind, arch), each a 64-byte header and a 16-byte payload marked with
// its place, so a kept entry can be recognised.
std::vector<std::byte> fatbin_of(const std::vector<std::pair<Kind, uint32_t>>& entries) {
  std::vector<std::byte> out(16);
  const uint32_t magic = 0xBA55ED50;
  const uint16_t version = 1, header = 16;
  const uint64_t files = entries.size() * (64 + 16);
  std::memcpy(out.data(), &magic, 4);
  std::memcpy(out.data() + 4, &version, 2);
  std::memcpy(out.data() + 6, &header, 2);
  std::memcpy(out.data() + 8, &files, 8);
  for (size_t i = 0; i < entries.size(); ++i) {
    std::vector<std::byte> entry(64 + 16, std::byte{static_cast<unsigned char>(i + 1)});
    const uint16_t kind = entries[i].first;
    const uint32_t header_bytes = 64, arch = entries[i].second, zero = 0;
    const uint64_t padded = 16, flags = 0x11;
    std::memcpy(entry.data(), &kind, 2);
    std::memcpy(entry.data() + 4, &header_bytes, 4);
    std::memcpy(entry.data() + 8, &padded, 8);
    std::memcpy(entry.data() + 16, &zero, 4);  // not compressed
    std::memcpy(entry.data() + 28, &arch, 4);
    std::memcpy(entry.data() + 40, &flags, 8);
    out.insert(out.end(), entry.begin(), entry.end());
  }
  return out;
}

// The (kind, arch) of each entry of `fatbin`.
std::vector<std::pair<Kind, uint32_t>> entries_of(const std::vector<std::byte>& fatbin) {
  std::vector<std::pair<Kind, uint32_t>> out;
  for (const auto& e : fatbin::fatbin_entries(fatbin)) {
    out.emplace_back(static_cast<Kind>(e.kind), e.sm_arch);
  }
  return out;
}

TEST(ImagesForDevices, sass_for_another_generation_or_a_newer_minor_goes) {
  const auto image = fatbin_of({{kElf, 75},
                                {kElf, 80},
                                {kElf, 86},
                                {kElf, 90},
                                {kElf, 100},
                                {kElf, 120},
                                {kPtx, 90},
                                {kPtx, 120}});
  const auto trimmed = trimmed_for_devices(image, {90});
  const std::vector<std::pair<Kind, uint32_t>> kept = {{kElf, 90}, {kPtx, 90}};
  EXPECT_EQ(entries_of(trimmed), kept);
  // Each kept entry is the very bytes it was: the second SASS (index 3) and the first PTX (6).
  const auto original = fatbin::fatbin_entries(image);
  const auto now = fatbin::fatbin_entries(trimmed);
  ASSERT_EQ(now.size(), 2u);
  EXPECT_TRUE(std::equal(now[0].stored.begin(), now[0].stored.end(), original[3].stored.begin(),
                         original[3].stored.end()));
  EXPECT_TRUE(std::equal(now[1].stored.begin(), now[1].stored.end(), original[6].stored.begin(),
                         original[6].stored.end()));
}

TEST(ImagesForDevices, older_minors_and_older_ptx_stay_since_the_driver_may_pick_them) {
  // An sm_86 device runs sm_80 and sm_86 SASS, and compiles compute_80 and compute_86 PTX; not
  // sm_89 SASS or compute_89 PTX.
  const auto image = fatbin_of(
      {{kElf, 80}, {kElf, 86}, {kElf, 89}, {kPtx, 80}, {kPtx, 86}, {kPtx, 89}, {kOther, 90}});
  const std::vector<std::pair<Kind, uint32_t>> kept = {
      {kElf, 80}, {kElf, 86}, {kPtx, 80}, {kPtx, 86}, {kOther, 90}};
  EXPECT_EQ(entries_of(trimmed_for_devices(image, {86})), kept)
      << "entries of a kind we do not know are the driver's to judge";
}

TEST(ImagesForDevices, what_any_device_of_the_backend_runs_is_kept) {
  const auto image = fatbin_of({{kElf, 80}, {kElf, 90}, {kElf, 120}});
  const std::vector<std::pair<Kind, uint32_t>> kept = {{kElf, 80}, {kElf, 90}};
  EXPECT_EQ(entries_of(trimmed_for_devices(image, {90, 80})), kept);
}

TEST(ImagesForDevices, an_image_goes_as_it_is_when_nothing_would_change_or_nothing_would_be_left) {
  const auto image = fatbin_of({{kElf, 90}, {kPtx, 90}});
  EXPECT_TRUE(trimmed_for_devices(image, {90}).empty()) << "nothing to drop";
  EXPECT_TRUE(trimmed_for_devices(image, {80}).empty())
      << "nothing runs: the driver says so itself (CUDA_ERROR_NO_BINARY_FOR_GPU)";
  EXPECT_TRUE(trimmed_for_devices(image, {}).empty()) << "devices unknown";
  const std::vector<std::byte> ptx = {std::byte{'.'}, std::byte{'v'}, std::byte{0}};
  EXPECT_TRUE(trimmed_for_devices(ptx, {90}).empty()) << "not a fatbinary";
  auto broken = fatbin_of({{kElf, 80}, {kElf, 90}});
  broken.resize(broken.size() - 8);  // the last entry runs past the end
  EXPECT_TRUE(trimmed_for_devices(broken, {90}).empty()) << "the backend judges it";
}

}  // namespace
}  // namespace gvirtus::cuda

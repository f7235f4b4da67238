// Managed variables mirrored in the client (frontend/managed_variables.h) against a backend of
// their own: a buffer standing for the backend's managed memory, which the transfers read and
// write. Variables packed in one page share a region whose transfers move only their bytes; a
// variable joining a page the host has dirtied already gets the backend's value without the host's
// writes to its neighbour being lost or its own value overwritten; a variable straddling a mapped
// page and new ones is mirrored in both; one in pages of an allocation is refused; and an owner's
// unload unmaps what only it held.
#include "frontend/managed_variables.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace gvirtus {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

class Variables : public ::testing::Test {
 protected:
  static constexpr size_t kPages = 4;

  void SetUp() override {
    // The backend's memory, and a free place in this process for its addresses.
    device_.resize(kPages * kPage);
    for (size_t i = 0; i < device_.size(); ++i) device_[i] = static_cast<std::byte>(i % 253);
    void* probe = ::mmap(nullptr, device_.size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(probe, MAP_FAILED);
    ::munmap(probe, device_.size());
    base_ = reinterpret_cast<uint64_t>(probe);
  }
  void TearDown() override {
    variables().remove_owner(kStub, kOwner);
    variables().remove_owner(kStub, kOther);
  }

  static ManagedVariables& variables() { return ManagedVariables::instance(); }

  ManagedTransfer transfer() {
    return {[this](uint64_t address, void* host, size_t bytes) {
              EXPECT_TRUE(inside_variables(address, bytes)) << "fetched " << bytes;
              std::memcpy(host, device_.data() + (address - base_), bytes);
              return true;
            },
            [this](uint64_t address, const void* host, size_t bytes) {
              EXPECT_TRUE(inside_variables(address, bytes)) << "flushed " << bytes;
              std::memcpy(device_.data() + (address - base_), host, bytes);
              return true;
            }};
  }

  bool add(const void* owner, uint64_t offset, uint64_t bytes) {
    std::string why;
    adding_offset_ = offset, adding_ = bytes;
    const bool added = variables().add(kStub, owner, base_ + offset, bytes, transfer(), why);
    adding_ = 0;
    if (added) placed_.push_back({offset, bytes});
    last_why_ = why;
    return added;
  }

  // Whether [address, address + bytes) lies in one variable placed: nothing else may move.
  bool inside_variables(uint64_t address, size_t bytes) const {
    for (const auto& [offset, size] : placed_) {
      if (address >= base_ + offset && address + bytes <= base_ + offset + size) return true;
    }
    // The variable being added is recorded after its value is fetched.
    return adding_ != 0 && address >= base_ + adding_offset_ &&
           address + bytes <= base_ + adding_offset_ + adding_;
  }

  volatile std::byte* program(uint64_t offset) {
    return reinterpret_cast<volatile std::byte*>(base_ + offset);
  }
  std::byte read(uint64_t offset) { return program(offset)[0]; }

  static inline const int kStubTag = 0, kOwnerTag = 0, kOtherTag = 0;
  static inline const void* const kStub = &kStubTag;
  static inline const void* const kOwner = &kOwnerTag;
  static inline const void* const kOther = &kOtherTag;
  std::vector<std::byte> device_;
  uint64_t base_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> placed_;
  uint64_t adding_ = 0, adding_offset_ = 0;
  std::string last_why_;
};

TEST_F(Variables, packed_in_one_page_move_only_their_own_bytes) {
  ASSERT_TRUE(add(kOwner, 0, 16)) << last_why_;
  ASSERT_TRUE(add(kOwner, 64, 8)) << last_why_;
  EXPECT_EQ(read(5), device_[5]);
  EXPECT_EQ(read(70), device_[70]);
  program(3)[0] = std::byte{0xaa};
  program(64)[0] = std::byte{0xbb};
  ASSERT_TRUE(ManagedMirror::instance().flush());
  EXPECT_EQ(device_[3], std::byte{0xaa});
  EXPECT_EQ(device_[64], std::byte{0xbb});
  EXPECT_EQ(device_[32], static_cast<std::byte>(32 % 253)) << "between the variables: untouched";
}

TEST_F(Variables, one_joining_a_dirty_page_gets_the_backend_value_and_loses_no_host_write) {
  ASSERT_TRUE(add(kOwner, 0, 16)) << last_why_;
  program(0)[0] = std::byte{0x11};  // the page is dirty now
  device_[100] = std::byte{0x77};   // the backend's value of the variable about to join
  ASSERT_TRUE(add(kOwner, 96, 8)) << last_why_;
  EXPECT_EQ(read(100), std::byte{0x77});
  ASSERT_TRUE(ManagedMirror::instance().flush());
  EXPECT_EQ(device_[0], std::byte{0x11}) << "the host's write to its neighbour";
  EXPECT_EQ(device_[100], std::byte{0x77}) << "not overwritten by a stale copy";
}

TEST_F(Variables, one_straddling_a_mapped_page_and_new_ones_is_mirrored_in_both) {
  ASSERT_TRUE(add(kOwner, 0, 16)) << last_why_;
  ASSERT_TRUE(add(kOwner, kPage - 8, 2 * kPage)) << last_why_;
  EXPECT_EQ(read(kPage - 4), device_[kPage - 4]);
  EXPECT_EQ(read(2 * kPage), device_[2 * kPage]);
  program(kPage + 1)[0] = std::byte{0x42};
  ASSERT_TRUE(ManagedMirror::instance().flush());
  EXPECT_EQ(device_[kPage + 1], std::byte{0x42});
  // Adding it again changes nothing.
  ASSERT_TRUE(add(kOwner, kPage - 8, 2 * kPage)) << last_why_;
}

TEST_F(Variables, one_in_the_pages_of_an_allocation_is_refused_with_the_reason) {
  std::string why;
  ASSERT_TRUE(ManagedMirror::instance().map(base_ + 2 * kPage, kPage, transfer(), why)) << why;
  EXPECT_FALSE(add(kOwner, 2 * kPage + 16, 8));
  EXPECT_NE(last_why_.find("shares pages"), std::string::npos) << last_why_;
  ManagedMirror::instance().unmap(base_ + 2 * kPage);
  EXPECT_FALSE(add(kOwner, 0, 0)) << "an empty variable";
}

TEST_F(Variables, an_owner_s_unload_unmaps_only_what_it_alone_held) {
  ASSERT_TRUE(add(kOwner, 0, 16)) << last_why_;
  ASSERT_TRUE(add(kOther, 32, 16)) << last_why_;
  ASSERT_TRUE(add(kOwner, 2 * kPage, 16)) << last_why_;
  variables().remove_owner(kStub, kOwner);
  uint64_t start = 0;
  size_t size = 0;
  EXPECT_TRUE(ManagedMirror::instance().find(base_ + 32, start, size)) << "the other's page";
  EXPECT_FALSE(ManagedMirror::instance().find(base_ + 2 * kPage, start, size));
  variables().remove_owner(kStub, kOther);
  EXPECT_FALSE(ManagedMirror::instance().find(base_ + 32, start, size));
}

}  // namespace
}  // namespace gvirtus

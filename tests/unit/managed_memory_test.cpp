// The managed memory mirror (frontend/managed_memory.h) against a backend of its own: a buffer
// standing for the backend's copy, which the transfers read and write, and which the test changes
// as a kernel would. The program's first read fetches, a write dirties, a flush sends exactly the
// dirty chunks, an invalidation makes the next read fetch what the "device" wrote, host writes
// are never lost, and a fault outside every region is not the mirror's.
#include "frontend/managed_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <thread>
#include <vector>

namespace gvirtus {
namespace {

constexpr size_t kChunk = ManagedMirror::kChunkBytes;

// A page-aligned address free in this process: reserved, then released for the mirror to take.
uint64_t free_address(size_t bytes) {
  void* probe = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(probe, MAP_FAILED);
  ::munmap(probe, bytes);
  return reinterpret_cast<uint64_t>(probe);
}

class Mirror : public ::testing::Test {
 protected:
  static constexpr size_t kBytes = 4 * kChunk + 4096;  // a short last chunk

  void SetUp() override {
    device_.assign(kBytes, std::byte{0});
    for (size_t i = 0; i < kBytes; ++i) device_[i] = static_cast<std::byte>(i % 251);
    address_ = free_address(kBytes);
    std::string why;
    ASSERT_TRUE(mirror().map(address_, kBytes, transfer(), why)) << why;
    before_ = mirror().stats();
  }
  void TearDown() override { mirror().unmap(address_); }

  static ManagedMirror& mirror() { return ManagedMirror::instance(); }

  ManagedTransfer transfer() {
    return {[this](uint64_t address, void* host, size_t bytes) {
              std::memcpy(host, device_.data() + (address - address_), bytes);
              ++fetches_;
              return !backend_gone_;
            },
            [this](uint64_t address, const void* host, size_t bytes) {
              std::memcpy(device_.data() + (address - address_), host, bytes);
              ++flushes_;
              return !backend_gone_;
            }};
  }

  // The program's view of the region: its accesses are what faults.
  volatile std::byte* program() { return reinterpret_cast<volatile std::byte*>(address_); }
  std::byte read(size_t offset) { return program()[offset]; }
  uint64_t fetched() const { return mirror().stats().fetched_bytes - before_.fetched_bytes; }
  uint64_t flushed() const { return mirror().stats().flushed_bytes - before_.flushed_bytes; }

  std::vector<std::byte> device_;
  uint64_t address_ = 0;
  ManagedStats before_;
  int fetches_ = 0, flushes_ = 0;
  bool backend_gone_ = false;
};

TEST_F(Mirror, the_first_read_fetches_only_the_chunk_it_touches) {
  EXPECT_EQ(read(kChunk + 5), device_[kChunk + 5]);
  EXPECT_EQ(fetches_, 1);
  EXPECT_EQ(fetched(), kChunk);
  EXPECT_EQ(read(kChunk + 9), device_[kChunk + 9]) << "the chunk is resident now";
  EXPECT_EQ(fetches_, 1);
  EXPECT_EQ(read(4 * kChunk + 100), device_[4 * kChunk + 100]) << "the short last chunk";
  EXPECT_EQ(fetched(), kChunk + 4096);
}

TEST_F(Mirror, reading_in_order_fetches_doubling_runs_and_nothing_twice) {
  for (size_t i = 0; i < kBytes; i += 4096) ASSERT_EQ(read(i), device_[i]) << i;
  EXPECT_EQ(fetches_, 3) << "chunk 0, then chunks 1-2, then what is left (3-4)";
  EXPECT_EQ(fetched(), kBytes);
}

TEST_F(Mirror, a_write_reaches_the_backend_at_the_flush_and_only_its_chunks_travel) {
  program()[3] = std::byte{0xaa};
  program()[2 * kChunk + 7] = std::byte{0xbb};
  EXPECT_NE(device_[3], std::byte{0xaa}) << "nothing travels before the flush";
  EXPECT_TRUE(mirror().flush());
  EXPECT_EQ(device_[3], std::byte{0xaa});
  EXPECT_EQ(device_[2 * kChunk + 7], std::byte{0xbb});
  EXPECT_EQ(flushes_, 2);
  EXPECT_EQ(flushed(), 2 * kChunk);
  EXPECT_TRUE(mirror().flush());
  EXPECT_EQ(flushes_, 2) << "clean chunks stay put";
  // A write after the flush dirties the chunk again.
  program()[4] = std::byte{0xcc};
  EXPECT_TRUE(mirror().flush());
  EXPECT_EQ(device_[4], std::byte{0xcc});
  EXPECT_EQ(flushes_, 3);
}

TEST_F(Mirror, adjacent_dirty_chunks_travel_as_one_transfer) {
  for (size_t chunk = 0; chunk < 3; ++chunk) program()[chunk * kChunk + 1] = std::byte{0x21};
  program()[4 * kChunk] = std::byte{0x22};  // the short last chunk, apart from them
  EXPECT_TRUE(mirror().flush());
  EXPECT_EQ(flushes_, 2) << "chunks 0-2 together, then chunk 4";
  EXPECT_EQ(flushed(), 3 * kChunk + 4096);
  for (size_t chunk = 0; chunk < 3; ++chunk)
    EXPECT_EQ(device_[chunk * kChunk + 1], std::byte{0x21});
  EXPECT_EQ(device_[4 * kChunk], std::byte{0x22});
}

TEST_F(Mirror, after_an_invalidation_the_host_reads_what_the_device_wrote) {
  EXPECT_EQ(read(10), device_[10]);
  device_[10] = std::byte{0x42};  // a kernel's write
  EXPECT_NE(read(10), std::byte{0x42}) << "the mirror's copy until invalidated";
  mirror().invalidate();
  EXPECT_EQ(read(10), std::byte{0x42});
  EXPECT_EQ(fetches_, 2);
}

TEST_F(Mirror, an_invalidation_keeps_the_hosts_writes_and_a_ranged_one_only_its_chunks) {
  program()[kChunk] = std::byte{0x11};               // dirty
  EXPECT_EQ(read(0), device_[0]);                    // clean
  EXPECT_EQ(read(2 * kChunk), device_[2 * kChunk]);  // clean
  mirror().invalidate(address_ + 2 * kChunk, 1);
  const int fetched_before = fetches_;
  EXPECT_EQ(read(1), device_[1]) << "chunk 0 stays clean";
  EXPECT_EQ(fetches_, fetched_before);
  EXPECT_EQ(read(2 * kChunk + 1), device_[2 * kChunk + 1]) << "chunk 2 fetched again";
  EXPECT_EQ(fetches_, fetched_before + 1);
  mirror().invalidate();
  EXPECT_EQ(read(kChunk), std::byte{0x11}) << "a dirty chunk is never dropped";
  EXPECT_TRUE(mirror().flush());
  EXPECT_EQ(device_[kChunk], std::byte{0x11});
}

TEST_F(Mirror, resident_ranges_need_no_fault_and_a_range_made_writable_is_flushed) {
  const uint64_t faults = mirror().stats().faults;
  EXPECT_TRUE(mirror().make_resident(address_ + kChunk - 8, 16, false));
  EXPECT_EQ(fetches_, 2) << "the two chunks the range spans";
  EXPECT_EQ(read(kChunk - 1), device_[kChunk - 1]);
  EXPECT_EQ(mirror().stats().faults, faults);
  EXPECT_TRUE(mirror().make_resident(address_ + 3 * kChunk, 8, true));
  program()[3 * kChunk] = std::byte{0x77};
  EXPECT_EQ(mirror().stats().faults, faults) << "writable without a fault";
  EXPECT_TRUE(mirror().flush());
  EXPECT_EQ(device_[3 * kChunk], std::byte{0x77});
  EXPECT_TRUE(mirror().make_resident(address_ + kBytes + 100, 8, true)) << "unmanaged: nothing";
}

TEST_F(Mirror, pinned_chunks_are_neither_flushed_nor_dropped_until_unpinned) {
  // A reply's landing (written) and a request's payload (read) in flight over the transport.
  bool pinned = false;
  EXPECT_TRUE(mirror().make_resident(address_, 8, true, &pinned));
  EXPECT_TRUE(mirror().make_resident(address_ + kChunk, 8, false, &pinned));
  program()[0] = std::byte{0x31};
  EXPECT_TRUE(mirror().flush());
  EXPECT_NE(device_[0], std::byte{0x31}) << "a pinned dirty chunk waits";
  mirror().invalidate();
  const int fetched_before = fetches_;
  EXPECT_EQ(read(kChunk + 1), device_[kChunk + 1]);
  EXPECT_EQ(fetches_, fetched_before) << "a pinned clean chunk stays";
  mirror().unpin(address_, 8);
  mirror().unpin(address_ + kChunk, 8);
  EXPECT_TRUE(mirror().flush());
  EXPECT_EQ(device_[0], std::byte{0x31});
  mirror().invalidate();
  EXPECT_EQ(read(kChunk + 1), device_[kChunk + 1]);
  EXPECT_EQ(fetches_, fetched_before + 1) << "dropped once unpinned";
}

TEST_F(Mirror, a_failed_flush_keeps_the_chunk_dirty_for_the_next_one) {
  program()[0] = std::byte{0x55};
  backend_gone_ = true;
  EXPECT_FALSE(mirror().flush());
  backend_gone_ = false;
  EXPECT_TRUE(mirror().flush());
  EXPECT_EQ(device_[0], std::byte{0x55});
}

TEST_F(Mirror, threads_writing_different_chunks_all_reach_the_backend) {
  std::vector<std::thread> writers;
  for (size_t t = 0; t < 4; ++t) {
    writers.emplace_back([this, t] {
      for (size_t i = 0; i < kChunk; i += 512) {
        program()[t * kChunk + i] = static_cast<std::byte>(t + 1);
      }
    });
  }
  for (auto& w : writers) w.join();
  EXPECT_TRUE(mirror().flush());
  for (size_t t = 0; t < 4; ++t) {
    for (size_t i = 0; i < kChunk; i += 512) {
      ASSERT_EQ(device_[t * kChunk + i], static_cast<std::byte>(t + 1)) << t << " " << i;
    }
  }
}

TEST_F(Mirror, regions_are_found_by_any_address_inside_them) {
  uint64_t base = 0;
  size_t bytes = 0;
  EXPECT_TRUE(mirror().find(address_ + kBytes - 1, base, bytes));
  EXPECT_EQ(base, address_);
  EXPECT_EQ(bytes, kBytes);
  EXPECT_FALSE(mirror().find(address_ + kBytes, base, bytes));
  EXPECT_FALSE(mirror().find(address_ - 1, base, bytes));
}

TEST(ManagedMirror, an_address_taken_in_this_process_or_unaligned_is_refused) {
  std::string why;
  const auto nowhere = ManagedTransfer{};
  const auto page = reinterpret_cast<uint64_t>(
      ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  EXPECT_FALSE(ManagedMirror::instance().map(page, 4096, nowhere, why));
  EXPECT_NE(why.find("taken"), std::string::npos) << why;
  ::munmap(reinterpret_cast<void*>(page), 4096);
  EXPECT_FALSE(ManagedMirror::instance().map(page + 1, 4096, nowhere, why));
  EXPECT_FALSE(ManagedMirror::instance().unmap(page));
}

TEST(ManagedMirrorDeathTest, a_fault_outside_every_region_is_not_the_mirrors) {
  const uint64_t address = free_address(1 << 20);
  std::string why;
  ASSERT_TRUE(ManagedMirror::instance().map(address, 1 << 20, ManagedTransfer{}, why)) << why;
  ManagedMirror::instance().unmap(address);
  EXPECT_DEATH(*reinterpret_cast<volatile int*>(address) = 1, "");
}

}  // namespace
}  // namespace gvirtus

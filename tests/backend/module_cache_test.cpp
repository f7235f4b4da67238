// The backend's module cache (backend/services/module_cache.h) on a real directory: entries found
// by content hash, damaged ones refused and removed, its size bound kept by dropping the least
// recently used, many processes filling it at once, and a writer killed mid-write leaving no entry.
#include "backend/services/module_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"

namespace gvirtus::services {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMiB = uint64_t{1} << 20;

std::vector<std::byte> image(size_t bytes, unsigned seed) {
  std::vector<std::byte> out(bytes);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x = x * 1103515245u + 12345u;
    b = static_cast<std::byte>(x >> 24);
  }
  return out;
}

// Files in `dir` whose names start with `prefix`.
size_t files_starting(const fs::path& dir, const std::string& prefix) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += e.path().filename().string().starts_with(prefix) ? 1 : 0;
  }
  return n;
}

// Sets an entry's last use `seconds_ago`, so that the order of use does not hang on the clock's
// granularity.
void used_ago(const fs::path& file, int seconds_ago) {
  timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds_ago;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0) << file;
}

class ModuleCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gvirtus-module-cache-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    dir_ = root_ / "modules";
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_, dir_;
};

TEST_F(ModuleCacheTest, finds_what_it_stored_by_its_hash_and_nothing_else) {
  ModuleCache cache(dir_, 64 * kMiB, 16 * kMiB);
  EXPECT_EQ(fs::status(dir_).permissions() & fs::perms::all, fs::perms::owner_all)
      << "a directory it makes is its user's alone";
  const auto bytes = image(100000, 1);
  const ContentHash hash = content_hash(bytes);
  EXPECT_FALSE(cache.find(hash));
  cache.store(hash, bytes);
  EXPECT_TRUE(fs::is_regular_file(dir_ / to_hex(hash)));
  const auto found = cache.find(hash);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->size, bytes.size());
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), found->bytes().begin()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(found->bytes().data()) % 8, 0u) << "aligned for a driver";
  EXPECT_FALSE(cache.find(content_hash(image(100000, 2))));
  const auto counts = cache.counts();
  EXPECT_EQ(counts.hits, 1u);
  EXPECT_EQ(counts.misses, 2u);
  EXPECT_EQ(counts.stored, 1u);
  EXPECT_EQ(cache.usage().entries, 1u);
  EXPECT_EQ(cache.usage().bytes, bytes.size());
}

TEST_F(ModuleCacheTest, an_entry_that_does_not_match_its_hash_is_refused_and_removed) {
  ModuleCache cache(dir_, 64 * kMiB, 16 * kMiB);
  const auto bytes = image(200000, 3);
  const ContentHash hash = content_hash(bytes);
  cache.store(hash, bytes);
  {  // one byte changed in place, as a damaged disk or a hand would
    std::fstream f(dir_ / to_hex(hash), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1000);
    f.put(static_cast<char>(~std::to_integer<unsigned char>(bytes[1000])));
  }
  EXPECT_FALSE(cache.find(hash));
  EXPECT_FALSE(fs::exists(dir_ / to_hex(hash))) << "removed, so the client's bytes replace it";
  // A torn entry (shorter than what was written) likewise.
  cache.store(hash, bytes);
  fs::resize_file(dir_ / to_hex(hash), bytes.size() / 2);
  EXPECT_FALSE(cache.find(hash));
  EXPECT_EQ(cache.counts().damaged, 2u);
  // Filled again, it is found again.
  cache.store(hash, bytes);
  EXPECT_TRUE(cache.find(hash));
}

TEST_F(ModuleCacheTest, keeps_its_bound_by_dropping_the_least_recently_used) {
  ModuleCache cache(dir_, 3 * kMiB, 16 * kMiB);
  std::vector<std::vector<std::byte>> images;
  std::vector<ContentHash> hashes;
  for (unsigned i = 0; i < 4; ++i) {
    images.push_back(image(kMiB, 10 + i));
    hashes.push_back(content_hash(images.back()));
  }
  for (unsigned i = 0; i < 3; ++i) cache.store(hashes[i], images[i]);
  used_ago(dir_ / to_hex(hashes[0]), 300);
  used_ago(dir_ / to_hex(hashes[1]), 200);
  used_ago(dir_ / to_hex(hashes[2]), 100);
  ASSERT_TRUE(cache.find(hashes[0])) << "the oldest, used now: the most recent";
  cache.store(hashes[3], images[3]);  // 4 MiB > 3 MiB: one goes
  EXPECT_FALSE(fs::exists(dir_ / to_hex(hashes[1]))) << "the least recently used went";
  EXPECT_TRUE(fs::exists(dir_ / to_hex(hashes[0])));
  EXPECT_TRUE(fs::exists(dir_ / to_hex(hashes[2])));
  EXPECT_TRUE(fs::exists(dir_ / to_hex(hashes[3])));
  EXPECT_EQ(cache.usage().bytes, 3 * kMiB);
  EXPECT_EQ(cache.counts().evicted, 1u);
  // An image larger than the whole bound is not kept at all (it would empty the cache).
  const auto huge = image(4 * kMiB, 20);
  cache.store(content_hash(huge), huge);
  EXPECT_FALSE(fs::exists(dir_ / to_hex(content_hash(huge))));
  EXPECT_EQ(cache.usage().entries, 3u);
}

// Eight worker processes fill the same entries and their own at once, reading as they go: every
// entry ends whole, none is damaged, no temporary file stays.
TEST_F(ModuleCacheTest, many_processes_filling_at_once_leave_only_whole_entries) {
  ModuleCache(dir_, 256 * kMiB, 16 * kMiB);  // the directory, as the daemon makes it
  constexpr unsigned kWorkers = 8, kShared = 4;
  std::vector<pid_t> workers;
  for (unsigned w = 0; w < kWorkers; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        ModuleCache cache(dir_, 256 * kMiB, 16 * kMiB);
        for (unsigned round = 0; round < 3; ++round) {
          for (unsigned i = 0; i < kShared; ++i) {
            const unsigned which = (i + w) % kShared;
            const auto bytes = image(2 * kMiB + which, 100 + which);
            const ContentHash hash = content_hash(bytes);
            if (!cache.find(hash)) cache.store(hash, bytes);
          }
          const auto own = image(kMiB, 200 + w);
          cache.store(content_hash(own), own);
        }
        status = cache.counts().damaged == 0 ? 0 : 2;
      } catch (...) {
        status = 3;
      }
      ::_exit(status);
    }
    workers.push_back(pid);
  }
  for (const pid_t pid : workers) {
    int status = -1;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  ModuleCache cache(dir_, 256 * kMiB, 16 * kMiB);
  for (unsigned i = 0; i < kShared; ++i) {
    EXPECT_TRUE(cache.find(content_hash(image(2 * kMiB + i, 100 + i)))) << i;
  }
  for (unsigned w = 0; w < kWorkers; ++w)
    EXPECT_TRUE(cache.find(content_hash(image(kMiB, 200 + w))));
  EXPECT_EQ(cache.counts().damaged, 0u);
  EXPECT_EQ(cache.usage().entries, kShared + kWorkers);
  EXPECT_EQ(files_starting(dir_, "tmp."), 0u);
}

// The kernel stops a writer in the middle of its write (a file size limit: SIGXFSZ). What it
// leaves is a temporary file, never an entry; the daemon's clean-up at start removes it.
TEST_F(ModuleCacheTest, a_writer_killed_mid_write_leaves_no_entry) {
  ModuleCache cache(dir_, 64 * kMiB, 16 * kMiB);
  const auto bytes = image(4 * kMiB, 7);
  const ContentHash hash = content_hash(bytes);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const rlimit limit{kMiB, kMiB};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    ::signal(SIGXFSZ, SIG_DFL);
    ModuleCache writer(dir_, 64 * kMiB, 16 * kMiB);
    writer.store(hash, bytes);
    ::_exit(0);  // not reached: the write past 1 MiB kills it
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGXFSZ);
  EXPECT_FALSE(fs::exists(dir_ / to_hex(hash)));
  EXPECT_FALSE(cache.find(hash));
  EXPECT_EQ(cache.counts().damaged, 0u) << "nothing torn was ever an entry";
  ASSERT_EQ(files_starting(dir_, "tmp."), 1u) << "the dead writer's temporary file";
  cache.clean_dead_writers();
  EXPECT_EQ(files_starting(dir_, "tmp."), 0u);
  cache.store(hash, bytes);
  EXPECT_TRUE(cache.find(hash));
}

TEST_F(ModuleCacheTest, a_directory_others_can_write_or_a_file_is_refused_with_its_name) {
  ASSERT_TRUE(fs::create_directory(dir_));
  fs::permissions(dir_, fs::perms::all);
  try {
    ModuleCache cache(dir_, kMiB, kMiB);
    ADD_FAILURE() << "a world-writable directory was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("writable by it alone"), std::string::npos) << e.what();
  }
  std::ofstream(root_ / "file") << "x";
  EXPECT_THROW(ModuleCache(root_ / "file", kMiB, kMiB), Error);
}

}  // namespace
}  // namespace gvirtus::services

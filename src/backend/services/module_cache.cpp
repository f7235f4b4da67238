#include "backend/services/module_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/log.h"

namespace gvirtus::services {
namespace {

constexpr std::string_view kTemporaryPrefix = "tmp.";
// A temporary file untouched this long belongs to no running write, whatever its name says (a
// process id may be reused): the largest image is written in well under a minute.
constexpr time_t kAbandonedAfterSeconds = 15 * 60;

struct DirEntry {
  std::string name;
  uint64_t bytes;
  timespec used;
};

// The regular files of the directory whose names `keep` accepts, with size and modification time.
template <typename Keep>
std::vector<DirEntry> list(int dir_fd, Keep keep) {
  std::vector<DirEntry> entries;
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return entries;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return entries;
  }
  while (const dirent* d = ::readdir(dir)) {
    const std::string_view name = d->d_name;
    if (!keep(name)) continue;
    struct stat st;
    if (::fstatat(dir_fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
      continue;  // gone meanwhile (another worker evicted it), or not ours to count
    }
    entries.push_back({std::string(name), static_cast<uint64_t>(st.st_size), st.st_mtim});
  }
  ::closedir(dir);
  return entries;
}

bool is_entry_name(std::string_view name) {
  return hash_from_hex(name).has_value();
}

bool older(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec;
}

// Writes all of `bytes` to `fd`; false (errno set) when it cannot.
bool write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min<size_t>(bytes.size(), size_t{1} << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return true;
}

bool read_all(int fd, std::byte* into, size_t size) {
  while (size > 0) {
    const ssize_t n = ::read(fd, into, std::min<size_t>(size, size_t{1} << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    into += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

ModuleCache::ModuleCache(std::filesystem::path dir, uint64_t max_bytes, uint64_t max_entry_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes), max_entry_bytes_(max_entry_bytes) {
  std::error_code error;
  const bool created = std::filesystem::create_directories(dir_, error);
  if (error) {
    raise(ErrorKind::kFailed,
          "module cache " + dir_.string() + ": cannot be created: " + error.message());
  }
  // A directory made here is this user's alone; an operator's own stays as it is, if it is safe.
  if (created) ::chmod(dir_.c_str(), S_IRWXU);
  dir_fd_.reset(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd_.valid()) raise_errno("module cache " + dir_.string() + ": cannot be opened", errno);
  struct stat st;
  if (::fstat(dir_fd_.get(), &st) != 0) raise_errno("module cache " + dir_.string(), errno);
  // Entries are verified on every read, so another user could not substitute a kernel; but one
  // able to write here could fill or empty the cache of every session.
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 || st.st_uid != ::geteuid()) {
    raise(ErrorKind::kFailed, "module cache " + dir_.string() +
                                  ": must be owned by this user and writable by it alone");
  }
}

std::optional<CachedImage> ModuleCache::find(const ContentHash& hash) {
  const std::string name = to_hex(hash);
  UniqueFd fd(::openat(dir_fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    ++misses_;
    return std::nullopt;
  }
  CachedImage image;
  image.size = static_cast<size_t>(st.st_size);
  bool sound = st.st_size > 0 && static_cast<uint64_t>(st.st_size) <= max_entry_bytes_;
  if (sound) {
    image.words.resize((image.size + 7) / 8);
    sound = read_all(fd.get(), reinterpret_cast<std::byte*>(image.words.data()), image.size) &&
            content_hash(image.bytes()) == hash;
  }
  if (!sound) {
    GVIRTUS_LOG(kWarning) << "module cache " << dir_.string() << ": entry " << name
                          << " does not hold what its name says; removed";
    ::unlinkat(dir_fd_.get(), name.c_str(), 0);
    ++damaged_;
    ++misses_;
    return std::nullopt;
  }
  ::futimens(fd.get(), nullptr);  // used now: the least recently used entries go first
  ++hits_;
  return image;
}

void ModuleCache::store(const ContentHash& hash, std::span<const std::byte> bytes) {
  if (bytes.empty() || bytes.size() > max_entry_bytes_ || bytes.size() > max_bytes_) return;
  const std::string name = to_hex(hash);
  const std::string temporary = std::string(kTemporaryPrefix) + std::to_string(::getpid()) + "." +
                                std::to_string(temporaries_++);
  UniqueFd fd(::openat(dir_fd_.get(), temporary.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, S_IRUSR | S_IWUSR));
  const bool written = fd.valid() && write_all(fd.get(), bytes);
  const int error = errno;
  fd.reset();
  // No fsync: a torn entry after a power cut fails its hash when read, and is fetched again.
  if (!written || ::renameat(dir_fd_.get(), temporary.c_str(), dir_fd_.get(), name.c_str()) != 0) {
    GVIRTUS_LOG(kWarning) << "module cache " << dir_.string() << ": entry " << name
                          << " not kept: " << std::strerror(written ? errno : error);
    ::unlinkat(dir_fd_.get(), temporary.c_str(), 0);
    return;
  }
  ++stored_;
  {
    // The directory is listed only when this process's reckoning says the bound may be passed,
    // or when it has stored a sixteenth of the bound or 256 entries since it last looked (other
    // workers fill it too): a program loading thousands of small images must not list the
    // directory thousands of times.
    std::lock_guard lock(reckoning_mutex_);
    if (!reckoned_) {
      reckoned_total_ = usage().bytes;
      reckoned_ = true;
    } else {
      reckoned_total_ += bytes.size();
    }
    stored_since_listing_ += bytes.size();
    ++stores_since_listing_;
    if (reckoned_total_ <= max_bytes_ && stored_since_listing_ <= max_bytes_ / 16 &&
        stores_since_listing_ < 256) {
      return;
    }
    stored_since_listing_ = 0;
    stores_since_listing_ = 0;
    reckoned_total_ = evict_beyond_bound(hash);
  }
}

uint64_t ModuleCache::evict_beyond_bound(const ContentHash& kept) {
  // One eviction at a time across processes: two would each remove the oldest for the same excess.
  UniqueFd lock(::openat(dir_fd_.get(), ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                         S_IRUSR | S_IWUSR));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) {
    GVIRTUS_LOG(kWarning) << "module cache " << dir_.string()
                          << ": cannot take its lock to keep its bound: " << std::strerror(errno);
    return 0;
  }
  auto entries = list(dir_fd_.get(), is_entry_name);
  uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  if (total <= max_bytes_) return total;
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return older(a.used, b.used); });
  const std::string kept_name = to_hex(kept);
  for (const auto& e : entries) {
    if (total <= max_bytes_) break;
    if (e.name == kept_name) continue;
    if (::unlinkat(dir_fd_.get(), e.name.c_str(), 0) == 0 || errno == ENOENT) {
      total -= e.bytes;
      ++evicted_;
    }
  }
  return total;
}

void ModuleCache::clean_dead_writers() {
  const auto temporaries =
      list(dir_fd_.get(), [](std::string_view name) { return name.starts_with(kTemporaryPrefix); });
  const time_t now = ::time(nullptr);
  for (const auto& t : temporaries) {
    const std::string_view rest = std::string_view(t.name).substr(kTemporaryPrefix.size());
    pid_t writer = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), writer);
    const bool running = error == std::errc() && writer > 0 && *end == '.' &&
                         (::kill(writer, 0) == 0 || errno == EPERM);
    if (running && now - t.used.tv_sec < kAbandonedAfterSeconds) continue;
    if (::unlinkat(dir_fd_.get(), t.name.c_str(), 0) == 0) {
      GVIRTUS_LOG(kInfo) << "module cache " << dir_.string() << ": removed " << t.name
                         << ", left by a writer that did not finish";
    }
  }
}

ModuleCache::Usage ModuleCache::usage() const {
  Usage usage;
  for (const auto& e : list(dir_fd_.get(), is_entry_name)) {
    ++usage.entries;
    usage.bytes += e.bytes;
  }
  return usage;
}

ModuleCache::Counts ModuleCache::counts() const {
  return {hits_.load(), misses_.load(), damaged_.load(), stored_.load(), evicted_.load()};
}

}  // namespace gvirtus::services

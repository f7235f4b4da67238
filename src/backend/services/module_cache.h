// The backend's module cache (issue 20): module images kept on disk by content hash
// (common/content_hash.h), shared by every session and every worker process of every backend
// that names the same directory, so that a program's second run - or a second program on the same
// libraries - sends the backend no kernel bytes, and the backend skips validating them again.
//
// Layout: one file per image in the directory, named by its hash's 64 hex digits; `.lock` (the
// lock evictions take); `tmp.<pid>.<n>`, files being written.
//   - A fill writes a private temporary file and renames it onto its name, so a reader sees a
//     whole entry or none, whatever number of workers fill the same entry at once (the last rename
//     wins; the bytes are the same). A writer killed mid-write leaves only its temporary file,
//     which the next clean_dead_writers() removes.
//   - Every read hashes the bytes it read: an entry that no longer matches its name (a torn write
//     after a power cut - nothing is fsynced -, a damaged disk, a hand's edit) is removed and
//     reported missing, so the client sends the image again.
//   - The directory is bounded: when a fill may have passed the bound, under the lock, the least
//     recently used entries go (a read marks an entry used by its modification time) until the
//     total fits. Each process reckons the total from its own fills and lists the directory
//     when that passes the bound, or after a sixteenth of the bound or 256 fills of its own, so
//     workers filling at once may pass the bound by that much each until they look.
// Safe to use from several threads at once. Nothing here is fatal to a session: a cache that cannot
// read or write logs why and behaves as if it held nothing. Only opening a directory that cannot be
// used at all throws.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "common/content_hash.h"
#include "common/unique_fd.h"

namespace gvirtus::services {

// An entry's bytes, in 8-byte words so that a module image is aligned as the driver wants.
struct CachedImage {
  std::vector<uint64_t> words;
  size_t size = 0;
  std::span<const std::byte> bytes() const {
    return {reinterpret_cast<const std::byte*>(words.data()), size};
  }
};

class ModuleCache {
 public:
  // Uses `dir`, created (mode 0700) if missing; at most `max_bytes` of entries, none larger than
  // `max_entry_bytes`. Throws Error naming the directory if it cannot be created or opened, is
  // not a directory, or is writable by other users.
  ModuleCache(std::filesystem::path dir, uint64_t max_bytes, uint64_t max_entry_bytes);

  const std::filesystem::path& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }

  // The entry named `hash` when it is here and its bytes hash to its name (used: it becomes the
  // most recent); nothing otherwise. A damaged entry is removed.
  std::optional<CachedImage> find(const ContentHash& hash);

  // Keeps `bytes` as the entry `hash` (which the caller computed from them), then evicts the
  // least recently used entries beyond the bound. Failures are logged: the entry is then missing.
  void store(const ContentHash& hash, std::span<const std::byte> bytes);

  // Removes temporary files whose writer is no longer running (a worker killed mid-write), or
  // that are older than any write takes. The daemon calls it when it starts.
  void clean_dead_writers();

  // Entries and their bytes now in the directory.
  struct Usage {
    size_t entries = 0;
    uint64_t bytes = 0;
  };
  Usage usage() const;

  // What this process's cache did, for its log.
  struct Counts {
    uint64_t hits = 0, misses = 0, damaged = 0, stored = 0, evicted = 0;
  };
  Counts counts() const;

 private:
  // Removes the least recently used entries but `kept` while the total passes the bound; returns
  // the total left.
  uint64_t evict_beyond_bound(const ContentHash& kept);

  std::filesystem::path dir_;
  UniqueFd dir_fd_;
  uint64_t max_bytes_;
  uint64_t max_entry_bytes_;
  std::atomic<uint64_t> temporaries_{0};
  std::mutex reckoning_mutex_;  // guards the reckoning of the total below
  bool reckoned_ = false;
  uint64_t reckoned_total_ = 0, stored_since_listing_ = 0, stores_since_listing_ = 0;
  std::atomic<uint64_t> hits_{0}, misses_{0}, damaged_{0}, stored_{0}, evicted_{0};
};

}  // namespace gvirtus::services

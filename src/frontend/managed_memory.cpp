// The managed memory mirror (managed_memory.h).
#include "frontend/managed_memory.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "frontend/call_stats.h"

namespace gvirtus {
namespace {

thread_local bool moving_now = false;

// Marks this thread as moving bytes for the mirror for the scope's length.
struct Moving {
  Moving() { moving_now = true; }
  ~Moving() { moving_now = false; }
  Moving(const Moving&) = delete;
  Moving& operator=(const Moving&) = delete;
};

struct sigaction previous_action {};

// A fault outside every region is someone else's: the handler that was there before, or the
// default action (the access faults again, and the process dies of it as it would have).
void chain(int signal, siginfo_t* info, void* context) {
  if ((previous_action.sa_flags & SA_SIGINFO) != 0 && previous_action.sa_sigaction != nullptr) {
    previous_action.sa_sigaction(signal, info, context);
    return;
  }
  if (previous_action.sa_handler == SIG_IGN) return;
  if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != nullptr) {
    previous_action.sa_handler(signal);
    return;
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  ::sigaction(SIGSEGV, &fallback, nullptr);
}

void on_fault(int signal, siginfo_t* info, void* context) {
  const int saved = errno;
  const auto address = reinterpret_cast<uint64_t>(info->si_addr);
  if (!ManagedMirror::instance().handle_fault(address)) chain(signal, info, context);
  errno = saved;
}

// The nanoseconds since `start`, for GVIRTUS_STATS's work table.
uint64_t since(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

size_t page_bytes() {
  static const size_t bytes = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return bytes;
}

}  // namespace

ManagedMirror& ManagedMirror::instance() {
  static ManagedMirror& mirror = *new ManagedMirror;
  return mirror;
}

bool ManagedMirror::moving() {
  return moving_now;
}

ManagedMirror::Region* ManagedMirror::region_of(uint64_t address) {
  auto it = regions_.upper_bound(address);
  if (it == regions_.begin()) return nullptr;
  --it;
  Region* r = it->second.get();
  return address - r->address < r->bytes ? r : nullptr;
}

const ManagedMirror::Region* ManagedMirror::region_of(uint64_t address) const {
  return const_cast<ManagedMirror*>(this)->region_of(address);
}

bool ManagedMirror::map(uint64_t address, size_t bytes, ManagedTransfer transfer,
                        std::string& why) {
  if (bytes == 0 || address % page_bytes() != 0 || address + bytes < address) {
    why = "a managed region must be a non-empty page-aligned range";
    return false;
  }
  const size_t mapped = (bytes + page_bytes() - 1) / page_bytes() * page_bytes();
  const int fd = ::memfd_create("gvirtus-managed", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
    why = std::string("managed memory of this process: ") + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return false;
  }
  // The program's view first: the private one may go anywhere, the program's only there.
  void* view = ::mmap(reinterpret_cast<void*>(address), mapped, PROT_NONE,
                      MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
  void* own = view == reinterpret_cast<void*>(address)
                  ? ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
  if (own == MAP_FAILED || view != reinterpret_cast<void*>(address)) {
    why = "the backend's managed address " + std::to_string(address) +
          " is taken in this process (or the memory cannot be mapped)";
    if (own != MAP_FAILED) ::munmap(own, mapped);
    // (A kernel without MAP_FIXED_NOREPLACE maps elsewhere rather than failing.)
    if (view != MAP_FAILED) ::munmap(view, mapped);
    ::close(fd);
    return false;
  }
  auto region = std::make_unique<Region>(
      Region{address, bytes, fd, static_cast<std::byte*>(own), std::move(transfer), {}});
  region->chunks.assign((bytes + kChunkBytes - 1) / kChunkBytes, State::kInvalid);
  region->pins.assign(region->chunks.size(), 0);
  std::lock_guard lock(mutex_);
  if (!handler_installed_) {
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    // On the thread's own stack (a fetch is a remote call: deeper than an alternate stack), and
    // with SIGSEGV blocked meanwhile: a fault inside the handler is a bug, which kills.
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGSEGV, &action, &previous_action);
    handler_installed_ = true;
  }
  regions_.emplace(address, std::move(region));
  active_.store(true, std::memory_order_release);
  return true;
}

bool ManagedMirror::unmap(uint64_t address) {
  std::lock_guard lock(mutex_);
  const auto it = regions_.find(address);
  if (it == regions_.end()) return false;
  Region& r = *it->second;
  const size_t mapped = (r.bytes + page_bytes() - 1) / page_bytes() * page_bytes();
  ::munmap(reinterpret_cast<void*>(r.address), mapped);
  ::munmap(r.own, mapped);
  ::close(r.fd);
  for (const State state : r.chunks) count_state(state, -1);
  regions_.erase(it);
  active_.store(!regions_.empty(), std::memory_order_release);
  return true;
}

bool ManagedMirror::reload(uint64_t address, size_t bytes, const std::function<void()>& change) {
  std::lock_guard lock(mutex_);
  change();
  Region* r = region_of(address);
  if (r == nullptr || bytes > r->address + r->bytes - address) return false;
  const Moving moving;
  if (!r->transfer.fetch(address, r->own + (address - r->address), bytes)) return false;
  stats_.fetched_bytes += bytes;
  return true;
}

bool ManagedMirror::find(uint64_t address, uint64_t& base, size_t& bytes) const {
  std::lock_guard lock(mutex_);
  const Region* r = region_of(address);
  if (r == nullptr) return false;
  base = r->address, bytes = r->bytes;
  return true;
}

void ManagedMirror::protect(Region& r, size_t chunk, State state, size_t count) {
  // The chunks' pages: the last one may be partly past the region's end (the mapping covers it).
  const size_t first = chunk * kChunkBytes;
  const size_t mapped = (r.bytes + page_bytes() - 1) / page_bytes() * page_bytes();
  const size_t bytes = std::min(count * kChunkBytes, mapped - first);
  const int prot = state == State::kInvalid ? PROT_NONE
                   : state == State::kClean ? PROT_READ
                                            : PROT_READ | PROT_WRITE;
  ::mprotect(reinterpret_cast<void*>(r.address + first), bytes, prot);
  for (size_t c = chunk; c < chunk + count; ++c) {
    count_state(r.chunks[c], -1);
    r.chunks[c] = state;
    count_state(state, +1);
  }
}

void ManagedMirror::count_state(State state, int delta) {
  if (state == State::kDirty) dirty_chunks_.fetch_add(static_cast<size_t>(delta));
  if (state == State::kClean) clean_chunks_.fetch_add(static_cast<size_t>(delta));
}

bool ManagedMirror::fetch(Region& r, size_t chunk, size_t count) {
  const size_t bytes = std::min(count * kChunkBytes, r.bytes - chunk * kChunkBytes);
  const Moving moving;
  const auto start = std::chrono::steady_clock::now();
  if (!r.transfer.fetch(r.address + chunk * kChunkBytes, r.own + chunk * kChunkBytes, bytes)) {
    return false;
  }
  stats_.fetched_bytes += bytes;
  note_stats_work("managed memory fetched", bytes, since(start));
  return true;
}

size_t ManagedMirror::fetch_for_fault(Region& r, size_t chunk) {
  r.window = chunk == r.next_in_order ? std::min(r.window * 2, kMaxReadaheadChunks) : 1;
  size_t count = 1;
  while (count < r.window && chunk + count < r.chunks.size() &&
         r.chunks[chunk + count] == State::kInvalid) {
    ++count;
  }
  if (!fetch(r, chunk, count)) return 0;
  protect(r, chunk, State::kClean, count);
  r.next_in_order = chunk + count;
  return count;
}

bool ManagedMirror::flush(Region& r, size_t chunk, size_t count) {
  // Read-only first: a write from now on faults and waits for this flush to end.
  protect(r, chunk, State::kClean, count);
  const size_t bytes = std::min(count * kChunkBytes, r.bytes - chunk * kChunkBytes);
  const Moving moving;
  const auto start = std::chrono::steady_clock::now();
  if (!r.transfer.flush(r.address + chunk * kChunkBytes, r.own + chunk * kChunkBytes, bytes)) {
    protect(r, chunk, State::kDirty, count);
    return false;
  }
  stats_.flushed_bytes += bytes;
  note_stats_work("managed memory flushed", bytes, since(start));
  return true;
}

bool ManagedMirror::handle_fault(uint64_t address) {
  std::lock_guard lock(mutex_);
  Region* r = region_of(address);
  if (r == nullptr) return false;
  ++stats_.faults;
  const size_t chunk = (address - r->address) / kChunkBytes;
  switch (r->chunks[chunk]) {
    case State::kInvalid:
      // Readable first; a write faults again and makes the chunk dirty.
      if (fetch_for_fault(*r, chunk) == 0) {
        std::fprintf(stderr,
                     "gvirtus: managed memory at %#llx could not be fetched from the "
                     "backend (the session is gone)\n",
                     static_cast<unsigned long long>(address));
        std::abort();
      }
      return true;
    case State::kClean:
      protect(*r, chunk, State::kDirty);
      return true;
    case State::kDirty:
      return false;  // a fault on a writable chunk is no access of ours to grant
  }
  return false;
}

bool ManagedMirror::flush() {
  // Asked before every request: with nothing dirty, no lock and no walk over the chunks.
  if (dirty_chunks_.load() == 0) return true;
  std::lock_guard lock(mutex_);
  bool all = true;
  // Each run of dirty chunks goes as one transfer (at most kMaxTransferBytes): a round trip per
  // run, not per chunk.
  constexpr size_t kRun = kMaxTransferBytes / kChunkBytes;
  for (auto& [address, region] : regions_) {
    const auto& chunks = region->chunks;
    for (size_t chunk = 0; chunk < chunks.size();) {
      // A pinned chunk is in the middle of a transfer of the transport's: it goes at a later flush.
      if (chunks[chunk] != State::kDirty || region->pins[chunk] != 0) {
        ++chunk;
        continue;
      }
      size_t count = 1;
      while (count < kRun && chunk + count < chunks.size() &&
             chunks[chunk + count] == State::kDirty && region->pins[chunk + count] == 0) {
        ++count;
      }
      all = flush(*region, chunk, count) && all;
      chunk += count;
    }
  }
  return all;
}

void ManagedMirror::invalidate(uint64_t address, size_t bytes) {
  // Every synchronisation asks: most programs have no managed memory, or none resident.
  if (!active() || clean_chunks_.load() == 0) return;
  std::lock_guard lock(mutex_);
  for (auto& [start, region] : regions_) {
    Region& r = *region;
    size_t first = 0, last = r.chunks.size();
    if (bytes != 0) {
      if (address >= r.address + r.bytes || address + bytes <= r.address) continue;
      first = (std::max(address, r.address) - r.address) / kChunkBytes;
      last = (std::min(address + bytes, r.address + r.bytes) - r.address + kChunkBytes - 1) /
             kChunkBytes;
    }
    for (size_t chunk = first; chunk < last; ++chunk) {
      if (r.chunks[chunk] == State::kClean && r.pins[chunk] == 0) {
        protect(r, chunk, State::kInvalid);
      }
    }
  }
}

template <typename Visit>
bool ManagedMirror::each_chunk(uint64_t address, size_t bytes, Visit visit) {
  const uint64_t end = address + bytes;
  for (uint64_t at = address; at < end;) {
    Region* r = region_of(at);
    if (r == nullptr) {
      // Not managed: on to the next region that starts inside the range, if any.
      const auto next = regions_.upper_bound(at);
      if (next == regions_.end() || next->first >= end) break;
      at = next->first;
      continue;
    }
    const size_t first = (at - r->address) / kChunkBytes;
    const size_t last =
        (std::min(end, r->address + r->bytes) - r->address + kChunkBytes - 1) / kChunkBytes;
    for (size_t chunk = first; chunk < last; ++chunk) {
      if (!visit(*r, chunk)) return false;
    }
    at = r->address + r->bytes;
  }
  return true;
}

bool ManagedMirror::make_resident(uint64_t address, size_t bytes, bool for_write, bool* pinned) {
  if (pinned != nullptr) *pinned = false;
  if (bytes == 0) return true;
  std::lock_guard lock(mutex_);
  return each_chunk(address, bytes, [&](Region& r, size_t chunk) {
    if (r.chunks[chunk] == State::kInvalid) {
      if (!fetch(r, chunk)) return false;
      protect(r, chunk, State::kClean);
    }
    if (for_write && r.chunks[chunk] == State::kClean) protect(r, chunk, State::kDirty);
    if (pinned != nullptr) {
      ++r.pins[chunk];
      *pinned = true;
    }
    return true;
  });
}

void ManagedMirror::unpin(uint64_t address, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard lock(mutex_);
  each_chunk(address, bytes, [](Region& r, size_t chunk) {
    if (r.pins[chunk] > 0) --r.pins[chunk];
    return true;
  });
}

ManagedStats ManagedMirror::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace gvirtus

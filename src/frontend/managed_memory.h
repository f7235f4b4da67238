// Managed memory mirrored in the client (issue 21): the coherence core, shared by every stub of
// the process through libgvirtus-frontend.so.1.
//
// A managed allocation lives in the backend's process, where kernels read and write it. The
// program reads and writes it here, at the same address (kernels get the address as a plain
// value, inside their arguments: it must mean the same on both sides). So each managed region is
// mirrored: this process maps memory of its own at the backend's address, and the mirror keeps
// the two copies coherent at the points CUDA's semantics name - a kernel sees what the host wrote
// before the launch; the host sees what kernels wrote once it has synchronised:
//
//   - A region is cut into chunks (kChunkBytes). Each chunk is invalid (no access: the mirror
//     holds nothing of it), clean (read-only: equal to the backend's copy when it was fetched) or
//     dirty (read-write: the host wrote it since).
//   - The program's first access to an invalid chunk faults (SIGSEGV); the handler fetches the
//     chunk from the backend and makes it clean (reading in order, a run of the chunks after it
//     too: readahead doubling up to kMaxReadaheadChunks). A write to a clean chunk faults too and
//     makes it dirty. A fault outside every region goes to the handler that was there before.
//   - flush() writes every dirty chunk to the backend and makes it clean (each run of adjacent
//     dirty chunks in one transfer). The frontend calls it before it sends any request, so
//     whatever the device does next sees the host's writes.
//   - invalidate() drops the mirror's clean chunks (a stub calls it after device work that may
//     write managed memory: a launch, a copy or memset into it), so that the host's next access
//     fetches what the device wrote. Dirty chunks stay: the host's writes are never lost.
//
// The mirror's memory is a memory file mapped twice: the program's view at the backend's address,
// whose protection tracks the chunk states, and a private view always readable and writable,
// through which fetches land and flushes read - no protection is ever lifted for the mirror's own
// work, so no other thread can slip a write past it.
//
// Moving bytes is the stub's: each region names a Transfer (fetch: backend to host; flush: host to
// backend) that must not touch the program's view of any region and must not reuse a buffer the
// faulting thread may be in the middle of filling (a stub's thread-local encoder): the fault can
// come from the stub's own code reading the program's memory.
//
// Thread affinity: any thread. One lock guards the states; a transfer runs under it, so the chunk
// it moves cannot change meanwhile (other threads touching managed memory wait for it). A
// transfer's own requests must not come back here: the frontend skips its pre-send flush on a
// thread in the middle of one (moving()).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gvirtus {

// Moves `bytes` between the backend's copy of managed memory at `address` and `host` (the mirror's
// private view); false when the transfer failed (the backend is gone).
struct ManagedTransfer {
  std::function<bool(uint64_t address, void* host, size_t bytes)> fetch;
  std::function<bool(uint64_t address, const void* host, size_t bytes)> flush;
};

struct ManagedStats {
  uint64_t fetched_bytes = 0;
  uint64_t flushed_bytes = 0;
  uint64_t faults = 0;
};

class ManagedMirror {
 public:
  static constexpr size_t kChunkBytes = size_t{64} << 10;
  // The most one transfer moves (runs of dirty chunks are flushed together): the stubs' copy
  // requests take up to 16 MiB.
  static constexpr size_t kMaxTransferBytes = size_t{4} << 20;
  // A program reading a region in order fetches ever larger runs of it, up to this many chunks
  // (2 MiB): a round trip per run, at the price of at most one run fetched past the last byte read.
  static constexpr size_t kMaxReadaheadChunks = 32;

  // The process's mirror (never destroyed: a fault may come during exit).
  static ManagedMirror& instance();

  // Maps a region of `bytes` at `address` (the backend's), all of it invalid. False, with the
  // reason in `why`, when the address is not page-aligned, the range is taken in this process or
  // the memory cannot be had. Installs the fault handler on first use.
  bool map(uint64_t address, size_t bytes, ManagedTransfer transfer, std::string& why);
  // Unmaps the region starting at `address` (its dirty chunks are dropped: the memory is freed);
  // false when no region starts there.
  bool unmap(uint64_t address);
  // The region holding `address`: its start and size; false when none does.
  bool find(uint64_t address, uint64_t& base, size_t& bytes) const;
  // Under the lock: runs `change` (which may widen what a region's transfer moves: a managed
  // variable placed in a page the mirror holds already), then loads [address, address + bytes),
  // which must lie in one region, from the backend into the mirror whatever its chunks' states -
  // the rest of a dirty chunk keeps the host's writes, and no flush can slip in between with stale
  // bytes for the range. False when the range is not in one region or the fetch failed.
  bool reload(uint64_t address, size_t bytes, const std::function<void()>& change);
  // Whether any region is mapped: read without the lock, on every request's way out.
  bool active() const { return active_.load(std::memory_order_acquire); }

  // Writes every dirty chunk to the backend; false when a transfer failed (the chunks stay dirty).
  bool flush();
  // Drops the clean chunks overlapping [address, address + bytes) - every region's with bytes 0.
  void invalidate(uint64_t address = 0, size_t bytes = 0);
  // Makes [address, address + bytes) readable (for_write: writable, and dirty) without a fault,
  // for a request's payload or a reply's landing inside managed memory. False when a fetch failed.
  // With `pinned`, the chunks stay as they are - neither flushed nor dropped - until unpin(): the
  // transport reads or writes them while it holds its locks, where a fault could not be served;
  // *pinned says whether any of the range was managed memory (and so needs unpin()).
  bool make_resident(uint64_t address, size_t bytes, bool for_write, bool* pinned = nullptr);
  void unpin(uint64_t address, size_t bytes);

  ManagedStats stats() const;

  // Whether this thread is in the middle of a transfer (its requests are the mirror's own).
  static bool moving();

  // The fault handler's work: true when `address` is managed and the access may be retried.
  bool handle_fault(uint64_t address);

 private:
  enum class State : uint8_t { kInvalid, kClean, kDirty };
  struct Region {
    uint64_t address;
    size_t bytes;
    int fd;
    std::byte* own;  // the private view
    ManagedTransfer transfer;
    std::vector<State> chunks;
    std::vector<uint32_t> pins;  // per chunk: transfers of the transport's in flight over it
    // Sequential faults: the chunk after the last fetch, and how many chunks the next fetch there
    // takes (doubling while the program reads on in order, up to kMaxReadaheadChunks).
    size_t next_in_order = SIZE_MAX;
    size_t window = 1;
  };

  ManagedMirror() = default;
  Region* region_of(uint64_t address);
  const Region* region_of(uint64_t address) const;
  // Fetches `chunk` and, when the program reads in order, the invalid chunks after it in the
  // fault's window; all of them clean on success. Returns how many were fetched (0: failed).
  size_t fetch_for_fault(Region& r, size_t chunk);
  bool fetch(Region& r, size_t chunk, size_t count = 1);
  // `count` chunks from `chunk`, as one transfer or one protection change.
  bool flush(Region& r, size_t chunk, size_t count);
  void protect(Region& r, size_t chunk, State state, size_t count = 1);
  void count_state(State state, int delta);
  // Calls visit(region, chunk) for each chunk of a region overlapping [address, address + bytes),
  // until one returns false (then false). With the lock held.
  template <typename Visit>
  bool each_chunk(uint64_t address, size_t bytes, Visit visit);

  mutable std::mutex mutex_;
  std::map<uint64_t, std::unique_ptr<Region>> regions_;  // by address
  ManagedStats stats_;
  bool handler_installed_ = false;
  std::atomic<bool> active_{false};
  // How many chunks are dirty and clean, over every region: flush() and invalidate() come on
  // every request and synchronisation, and skip their walk when there is nothing to do.
  std::atomic<size_t> dirty_chunks_{0};
  std::atomic<size_t> clean_chunks_{0};
};

}  // namespace gvirtus

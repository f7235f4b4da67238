#include "plugins/cudart/frontend/shared_staging.h"

#include <array>
#include <mutex>
#include <utility>

#include "plugins/cudart/frontend/shared_host.h"

namespace gvirtus::cudart {
namespace {

// At most this many copies use staging at once; each pair pins 16 MiB on the backend's machine.
constexpr int kMaxPairs = 4;

struct Pair {
  std::array<std::byte*, 2> blocks{};
  std::array<uint64_t, 2> offsets{};
  bool busy = false;
};

struct Pool {
  std::mutex mutex;
  const std::byte* arena = nullptr;  // the arena the pairs live in
  std::array<Pair, kMaxPairs> pairs;
  int made = 0;
  bool gave_up = false;  // making a pair failed in this arena: do not try again
};

Pool& pool() {
  static auto* p = new Pool;  // never destroyed: copies may run until the process ends
  return *p;
}

// One pinned block of the arena, or nullptr (with nothing left allocated).
std::byte* make_block() {
  SharedHostPlacement placement;
  if (shared_host_alloc(StagingLease::kBlockBytes, cudaHostAllocDefault, placement) !=
          cudaSuccess ||
      !placement.placed) {
    return nullptr;
  }
  return static_cast<std::byte*>(placement.ptr);
}

}  // namespace

StagingLease lease_staging() {
  const std::byte* arena = shared_host_arena();
  if (arena == nullptr) return StagingLease();
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  if (p.arena != arena) {  // a new session (a forked child): the old pairs are not ours
    p.arena = arena;
    p.pairs = {};
    p.made = 0;
    p.gave_up = false;
  }
  for (int i = 0; i < p.made; ++i) {
    if (!p.pairs[i].busy) {
      p.pairs[i].busy = true;
      return StagingLease(i);
    }
  }
  if (p.made == kMaxPairs || p.gave_up) return StagingLease();
  Pair pair;
  for (int b = 0; b < 2; ++b) {
    pair.blocks[b] = make_block();
    const auto offset = pair.blocks[b]
                            ? shared_host_offset(pair.blocks[b], StagingLease::kBlockBytes)
                            : std::nullopt;
    if (!offset) {
      if (b == 1 && pair.blocks[0] != nullptr) (void)shared_host_free(pair.blocks[0]);
      p.gave_up = true;  // an arena too small or a backend that cannot pin: the ordinary path
      return StagingLease();
    }
    pair.offsets[b] = *offset;
  }
  pair.busy = true;
  p.pairs[p.made] = pair;
  return StagingLease(p.made++);
}

StagingLease::StagingLease(StagingLease&& other) noexcept : pair_(std::exchange(other.pair_, -1)) {}

StagingLease::~StagingLease() {
  if (pair_ < 0) return;
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  p.pairs[pair_].busy = false;
}

std::byte* StagingLease::block(int i) const {
  return pool().pairs[pair_].blocks[i];
}

uint64_t StagingLease::offset(int i) const {
  return pool().pairs[pair_].offsets[i];
}

}  // namespace gvirtus::cudart

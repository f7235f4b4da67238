// Pinned staging for synchronous copies of pageable client memory (pinned_staging.h).
#include "common/pinned_staging.h"

namespace gvirtus::staging {

PinnedPool::Lease PinnedPool::lease() {
  const void* arena = hooks_.arena();
  if (arena == nullptr) return Lease();
  std::lock_guard lock(mutex_);
  if (arena_ != arena) {  // a new session (a forked child): the old pairs are not ours
    arena_ = arena;
    pairs_ = {};
    made_ = 0;
    gave_up_ = false;
  }
  for (int i = 0; i < made_; ++i) {
    if (!pairs_[i].busy) {
      pairs_[i].busy = true;
      return Lease(this, i);
    }
  }
  if (made_ == kMaxPairs || gave_up_) return Lease();
  Pair pair;
  for (int b = 0; b < 2; ++b) {
    pair.blocks[b] = hooks_.allocate(kBlockBytes);
    const auto offset =
        pair.blocks[b] != nullptr ? hooks_.offset(pair.blocks[b], kBlockBytes) : std::nullopt;
    if (!offset) {
      if (b == 1 && pair.blocks[0] != nullptr) hooks_.release(pair.blocks[0]);
      gave_up_ = true;  // an arena too small or a backend that cannot pin: the ordinary path
      return Lease();
    }
    pair.offsets[b] = *offset;
  }
  pair.busy = true;
  pairs_[made_] = pair;
  return Lease(this, made_++);
}

PinnedPool::Lease::~Lease() {
  if (pair_ < 0) return;
  std::lock_guard lock(pool_->mutex_);
  pool_->pairs_[pair_].busy = false;
}

std::byte* PinnedPool::Lease::block(int i) const {
  return pool_->pairs_[pair_].blocks[i];
}

uint64_t PinnedPool::Lease::offset(int i) const {
  return pool_->pairs_[pair_].offsets[i];
}

}  // namespace gvirtus::staging

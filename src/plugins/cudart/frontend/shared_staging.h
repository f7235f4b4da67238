// Pinned staging for copies of ordinary (pageable) client memory over a transport that shares
// memory with the backend (shm's arena). Instead of streaming the bytes through the ring, into the
// backend's receive buffer and through the runtime's own staging copy, the stub copies them
// through two page-locked blocks of the arena, which the backend's runtime reads or fills with the
// GPU's DMA (cudaMemcpyShared). Two blocks, so that while the backend copies one the stub fills or
// empties the other.
//
// A small pool of block pairs serves all threads; a copy that finds none free (or an arena too
// small, or a transport that shares nothing) takes the ordinary path.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gvirtus::cudart {

class StagingLease {
 public:
  static constexpr size_t kBlockBytes = size_t{8} << 20;

  StagingLease() = default;
  ~StagingLease();
  StagingLease(StagingLease&& other) noexcept;
  StagingLease& operator=(StagingLease&&) = delete;
  StagingLease(const StagingLease&) = delete;

  explicit operator bool() const { return pair_ >= 0; }
  std::byte* block(int i) const;
  uint64_t offset(int i) const;  // in the shared memory, for cudaMemcpyShared

 private:
  friend StagingLease lease_staging();
  explicit StagingLease(int pair) : pair_(pair) {}
  int pair_ = -1;
};

// A free pair of the current session's pool (made on first need), or an empty lease.
StagingLease lease_staging();

}  // namespace gvirtus::cudart

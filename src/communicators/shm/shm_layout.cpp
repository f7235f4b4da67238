#include "communicators/shm/shm_layout.h"

#include <cstring>
#include <new>
#include <string>

#include "common/error.h"

namespace gvirtus::shm {

void init_header(void* base, uint64_t ring_bytes) {
  // The segment is fresh or being reset while nobody uses its rings: plain construction is fine.
  std::memset(base, 0, kHeaderBytes);
  auto* header = new (base) SegmentHeader{};
  header->magic = kMagic;
  header->version = kVersion;
  header->header_bytes = kHeaderBytes;
  header->ring_bytes = ring_bytes;
}

void reset_session(SegmentHeader* header, uint64_t ring_bytes) {
  header->state.store(kResetting, std::memory_order_seq_cst);
  header->magic = kMagic;
  header->version = kVersion;
  header->header_bytes = kHeaderBytes;
  header->ring_bytes = ring_bytes;
  for (int side : {kServerSide, kClientSide}) {
    header->heartbeat[side].store(0, std::memory_order_relaxed);
    header->closed[side].store(0, std::memory_order_relaxed);
  }
  for (RingControl& ring : header->rings) {
    ring.head.store(0, std::memory_order_relaxed);
    ring.tail.store(0, std::memory_order_relaxed);
    ring.reader_waiting.store(0, std::memory_order_relaxed);
    ring.writer_waiting.store(0, std::memory_order_relaxed);
  }
  header->generation.fetch_add(1, std::memory_order_relaxed);
  header->state.store(kListening, std::memory_order_release);
}

uint64_t validate_header(const void* base, uint64_t mapped_bytes, std::string_view what) {
  const auto* header = static_cast<const SegmentHeader*>(base);
  const std::string where(what);
  if (mapped_bytes < kHeaderBytes || header->magic != kMagic) {
    raise(ErrorKind::kInvalidInput, where + ": not a gvirtus shm segment (bad magic)");
  }
  if (header->version != kVersion || header->header_bytes != kHeaderBytes) {
    raise(ErrorKind::kInvalidInput, where + ": shm segment version " +
                                        std::to_string(header->version) + ", this build speaks " +
                                        std::to_string(kVersion));
  }
  const uint64_t ring = header->ring_bytes;
  if (!valid_ring_bytes(ring) || segment_bytes(ring) > mapped_bytes) {
    raise(ErrorKind::kInvalidInput, where + ": shm segment rings of " + std::to_string(ring) +
                                        " bytes do not fit its " + std::to_string(mapped_bytes) +
                                        " bytes");
  }
  return ring;
}

}  // namespace gvirtus::shm

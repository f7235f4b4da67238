// What the two ends of an rdma connection tell each other, and how data moves.
//
// Setup: the rdma_cm connect request and its reply carry a Hello (explicit little-endian), which
// names each side's receive window: `slots` landing buffers of `slot_bytes` in one registered
// region (address and rkey). Nothing else is exchanged out of band.
//
// Data: a message is its 8-byte little-endian length, then its bytes, cut into slot-sized
// segments. Each segment is one RDMA WRITE WITH IMMEDIATE into the peer's next landing slot, in
// order (slot = sequence mod slots); the immediate says which slot and returns credits. A sender
// holds one credit per free peer slot and never writes without one, so a write always finds its
// slot free and a receive request posted. The receiver copies a segment out (or returns a view of
// a one-segment message) and frees the slot; freed slots go back as credits in the immediate of
// its next write, or, when it has nothing to send, in a zero-length "credit only" write once half
// the window is free. Small segments are sent inline (no staging copy, no DMA read of our memory).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/wire.h"

namespace gvirtus::rdma {

inline constexpr uint32_t kHelloMagic = 0x44525647;  // "GVRD"
inline constexpr uint16_t kHelloVersion = 1;
inline constexpr size_t kHelloBytes = 28;  // fits rdma_cm's 56-byte connect private data
inline constexpr uint32_t kMaxSlots = 1024;

struct Hello {
  uint64_t window_addr = 0;
  uint32_t window_rkey = 0;
  uint32_t slots = 0;
  uint32_t slot_bytes = 0;
};

inline void encode_hello(const Hello& h, std::byte* out) {
  store_le<uint32_t>(out, kHelloMagic);
  store_le<uint16_t>(out + 4, kHelloVersion);
  store_le<uint16_t>(out + 6, 0);
  store_le<uint64_t>(out + 8, h.window_addr);
  store_le<uint32_t>(out + 16, h.window_rkey);
  store_le<uint32_t>(out + 20, h.slots);
  store_le<uint32_t>(out + 24, h.slot_bytes);
}

// Returns false when the bytes are not a Hello of our version or describe an unusable window.
inline bool decode_hello(const void* data, size_t bytes, Hello& h) {
  if (data == nullptr || bytes < kHelloBytes) return false;
  const auto* in = static_cast<const std::byte*>(data);
  if (load_le<uint32_t>(in) != kHelloMagic || load_le<uint16_t>(in + 4) != kHelloVersion) {
    return false;
  }
  h.window_addr = load_le<uint64_t>(in + 8);
  h.window_rkey = load_le<uint32_t>(in + 16);
  h.slots = load_le<uint32_t>(in + 20);
  h.slot_bytes = load_le<uint32_t>(in + 24);
  return h.slots >= 4 && h.slots <= kMaxSlots && h.slot_bytes >= 4096 &&
         h.slot_bytes <= (uint32_t{16} << 20);
}

// The immediate of a write: the landing slot (kCreditOnly for none) and credits returned.
inline constexpr uint32_t kCreditOnly = 0xFFFF;
inline uint32_t make_imm(uint32_t slot, uint32_t credits) {
  return (slot & 0xFFFF) | (credits << 16);
}
inline uint32_t imm_slot(uint32_t imm) {
  return imm & 0xFFFF;
}
inline uint32_t imm_credits(uint32_t imm) {
  return imm >> 16;
}

inline constexpr size_t kLengthBytes = sizeof(uint64_t);

}  // namespace gvirtus::rdma

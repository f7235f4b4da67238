// The INTEGRITY_CHECK private export table's function: NVIDIA's runtime asks the driver for a
// 16-byte answer over the runtime's version, the time, the process, the thread, the addresses of
// two export tables and every device's identity, computes the same itself, and refuses to run
// when they differ. The facts (from public reverse engineering, ZLUDA's dark_api): it is
// HMAC-MD2 (RFC 2104 over RFC 1319's MD2, block size 16) with a fixed key over those inputs; for
// runtime versions ending in 0 or 1 it is a fixed pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace gvirtus::cuda {

// MD2 (RFC 1319) of `message`.
void md2(std::span<const std::byte> message, uint8_t digest[16]);

// HMAC-MD2 of `message` under a key of exactly one block (16 bytes).
void hmac_md2(const uint8_t key[16], std::span<const std::byte> message, uint8_t digest[16]);

struct IntegrityInputs {
  uint32_t runtime_version = 0;  // the caller's
  uint64_t unix_seconds = 0;     // the caller's
  uint32_t driver_version = 0;   // as cuDriverGetVersion answers
  uint32_t process = 0;          // getpid()
  uint32_t thread = 0;           // pthread_self(), truncated
  const void* cudart_table = nullptr;
  const void* integrity_table = nullptr;
  const void* function = nullptr;  // the integrity check function itself (its table's slot 1)
};

struct DeviceIdentity {
  uint8_t uuid[16];
  int32_t pci_domain, pci_bus, pci_device;
};

// The answer for these inputs and devices (in ordinal order).
void integrity_answer(const IntegrityInputs& inputs, std::span<const DeviceIdentity> devices,
                      uint64_t result[2]);

}  // namespace gvirtus::cuda

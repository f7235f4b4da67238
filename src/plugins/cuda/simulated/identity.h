// The simulated devices' identity, one definition for the two test doubles that describe them:
// the simulated CUDA device (libgvirtus-simulated-cuda.so) and the simulated NVML
// (libgvirtus-simulated-nvml.so, src/plugins/nvml/simulated). Each device's identity comes from
// its physical index p (its place among GVIRTUS_SIMULATED_DEVICES, whatever CUDA_VISIBLE_DEVICES
// made its CUDA ordinal), so that a test tells which device it sees, through either library.
// Named so that nobody mistakes one for a GPU.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace gvirtus::simulated {

inline constexpr uint64_t kDeviceBytes = uint64_t{16} << 30;  // what a device claims to have
inline constexpr int kComputeMajor = 9;
inline constexpr int kComputeMinor = 0;
inline constexpr unsigned kClockMhz = 1980;        // its SM clock (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
inline constexpr unsigned kMultiprocessors = 132;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

inline std::string device_name(int physical) {
  return "gvirtus simulated device " + std::to_string(physical) + " (no GPU)";
}

// The PCI bus of device p: domain 0, bus p + 1, device 0, function 0.
inline unsigned pci_bus(int physical) {
  return static_cast<unsigned>(physical) + 1;
}

// As CUDA writes it ("0000:01:00.0").
inline std::string pci_bus_id(int physical) {
  char text[16];
  std::snprintf(text, sizeof text, "0000:%02x:00.0", pci_bus(physical));
  return text;
}

// The 16 bytes of its UUID: "gvirtus-simulate" for device 0 (the one device's UUID before there
// were several), its last letter moved on by p for device p.
inline void device_uuid(int physical, char (&bytes)[16]) {
  std::memcpy(bytes, "gvirtus-simulate", sizeof bytes);
  bytes[15] = static_cast<char>(bytes[15] + physical);
}

}  // namespace gvirtus::simulated

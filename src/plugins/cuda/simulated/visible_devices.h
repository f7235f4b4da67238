// Which simulated devices a backend process sees: GVIRTUS_SIMULATED_DEVICES says how many
// "physical" simulated GPUs exist (1..16, default 1), and CUDA_VISIBLE_DEVICES selects among them
// as NVIDIA's driver does for a list of integers. Read once, by cuInit (device.cpp); pure, so that
// the rules are tested without a backend (tests/driver/visible_devices_test.cpp).
#pragma once

#include <string>
#include <vector>

namespace gvirtus::simulated {

inline constexpr int kMaxDevices = 16;

struct VisibleDevices {
  // The physical index of each visible device, by ordinal (0..k-1). Empty: no device.
  std::vector<int> physical;
  // Why the configuration was refused (an invalid GVIRTUS_SIMULATED_DEVICES); empty if it was not.
  std::string error;
};

// `simulated` and `visible` are the two variables' values, null when unset.
// - `simulated`: a decimal integer 1..kMaxDevices; anything else is an error.
// - `visible`: null means every device in order; otherwise a comma-separated list of physical
//   indexes, taken in its order up to the first entry that is not a valid index (not a decimal
//   integer, out of range, or a repeat), which hides itself and every later entry, as CUDA does.
//   The empty string hides every device. GPU UUIDs and MIG names select nothing here.
VisibleDevices visible_devices(const char* simulated, const char* visible);

}  // namespace gvirtus::simulated

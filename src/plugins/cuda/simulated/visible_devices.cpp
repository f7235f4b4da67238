// The simulated devices a process sees (visible_devices.h).
#include "visible_devices.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace gvirtus::simulated {
namespace {

// A decimal integer and nothing else (no sign, no spaces), or -1.
int decimal(std::string_view text) {
  int value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return -1;
  return value;
}

}  // namespace

VisibleDevices visible_devices(const char* simulated, const char* visible) {
  VisibleDevices devices;
  int count = 1;
  if (simulated != nullptr) {
    count = decimal(simulated);
    if (count < 1 || count > kMaxDevices) {
      devices.error = "GVIRTUS_SIMULATED_DEVICES=\"" + std::string(simulated) +
                      "\" is not a device count from 1 to " + std::to_string(kMaxDevices);
      return devices;
    }
  }
  if (visible == nullptr) {
    for (int p = 0; p < count; ++p) devices.physical.push_back(p);
    return devices;
  }
  std::string_view rest(visible);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const int p = decimal(rest.substr(0, comma));
    if (p < 0 || p >= count || std::ranges::find(devices.physical, p) != devices.physical.end()) {
      break;
    }
    devices.physical.push_back(p);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return devices;
}

}  // namespace gvirtus::simulated

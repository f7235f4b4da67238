#include "common/device_selection.h"

#include <algorithm>
#include <charconv>

#include "common/error.h"

namespace gvirtus {
namespace {

std::string_view trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

// The comma-separated entries of `text`, each trimmed.
std::vector<std::string_view> entries(std::string_view text) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t comma = text.find(',');
    out.push_back(trim(text.substr(0, comma)));
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

std::optional<std::vector<uint32_t>> parse_device_selection(std::string_view text,
                                                            const std::string& what) {
  if (trim(text).empty()) return std::nullopt;
  if (trim(text) == "none") return std::vector<uint32_t>{};
  const auto fail = [&](const std::string& why) -> void {
    raise(ErrorKind::kInvalidInput, what + ": \"" + std::string(text.substr(0, 80)) +
                                        (text.size() > 80 ? "..." : "") + "\": " + why +
                                        " (expected device indexes separated by commas, "
                                        "such as \"0,2\")");
  };
  if (text.size() > kMaxSelectionText) fail("longer than " + std::to_string(kMaxSelectionText));
  std::vector<uint32_t> devices;
  for (const std::string_view entry : entries(text)) {
    uint32_t index = 0;
    const auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
    if (entry.empty() || error != std::errc() || end != entry.data() + entry.size()) {
      fail(entry.empty() ? "an empty entry" : "\"" + std::string(entry) + "\" is not an index");
    }
    if (std::find(devices.begin(), devices.end(), index) != devices.end()) {
      fail("device " + std::to_string(index) + " is named twice");
    }
    if (devices.size() == kMaxSelectedDevices) {
      fail("more than " + std::to_string(kMaxSelectedDevices) + " devices");
    }
    devices.push_back(index);
  }
  return devices;
}

std::string format_device_selection(const std::vector<uint32_t>& devices) {
  if (devices.empty()) return "none";
  std::string out;
  for (const uint32_t d : devices) out += (out.empty() ? "" : ",") + std::to_string(d);
  return out;
}

std::string compose_visible_devices(const char* backend, const std::vector<uint32_t>& selection) {
  if (backend == nullptr || trim(backend).empty()) {
    // No device is an empty CUDA_VISIBLE_DEVICES: CUDA then reports none.
    return selection.empty() ? std::string() : format_device_selection(selection);
  }
  const std::vector<std::string_view> offered = entries(backend);
  std::string out;
  for (const uint32_t d : selection) {
    if (d >= offered.size()) {
      raise(ErrorKind::kInvalidInput,
            "device " + std::to_string(d) + " was selected, but this backend offers " +
                std::to_string(offered.size()) + " (its CUDA_VISIBLE_DEVICES is \"" +
                std::string(backend) + "\")");
    }
    out += (out.empty() ? "" : ",") + std::string(offered[d]);
  }
  return out;
}

}  // namespace gvirtus

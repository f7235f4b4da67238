#include "plugins/cuda/frontend/images_for_devices.h"

#include <algorithm>

#include "common/error.h"
#include "fatbin_container.h"
#include "plugins/cuda/common/module_image.h"

namespace gvirtus::cuda {

std::vector<std::byte> trimmed_for_devices(std::span<const std::byte> image,
                                           const std::vector<int>& archs) {
  if (archs.empty() || module_image_kind(image.data(), image.size()) != ModuleImageKind::kFatbin) {
    return {};
  }
  std::vector<fatbin::Entry> entries;
  try {
    entries = fatbin::fatbin_entries(image);
  } catch (const Error&) {
    return {};  // the backend judges a malformed image, as the driver would
  }
  const auto runs_somewhere = [&](const fatbin::Entry& e) {
    const int arch = static_cast<int>(e.sm_arch);
    switch (static_cast<fatbin::EntryKind>(e.kind)) {
      case fatbin::EntryKind::kElf:
        return std::any_of(archs.begin(), archs.end(), [&](int device) {
          return device / 10 == arch / 10 && device % 10 >= arch % 10;
        });
      case fatbin::EntryKind::kPtx:
        return std::any_of(archs.begin(), archs.end(), [&](int device) { return device >= arch; });
    }
    return true;  // a kind we do not know: the driver's to judge
  };
  std::vector<fatbin::Entry> kept;
  for (const auto& e : entries) {
    if (runs_somewhere(e)) kept.push_back(e);
  }
  if (kept.size() == entries.size() || kept.empty()) return {};
  return fatbin::fatbin_of_entries(image, kept);
}

}  // namespace gvirtus::cuda

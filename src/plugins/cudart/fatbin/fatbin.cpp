// kernel_layouts(): ELF entries first, highest arch first, then PTX for kernels no ELF holds.
#include "fatbin.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "bounded.h"
#include "decompress.h"
#include "elf_nv_info.h"
#include "fatbin_container.h"
#include "ptx_params.h"

namespace gvirtus::fatbin {
namespace {

struct Found {
  KernelLayout layout;
  uint32_t sm_arch;
};

// Records `layout` unless a higher arch gave it already; then the two must agree where
// `conflicts` refuses disagreement (see fatbin.h).
void merge_elf(std::map<std::string, Found, std::less<>>& found, KernelLayout layout,
               uint32_t sm_arch, ArchConflicts conflicts) {
  const auto it = found.find(layout.name);
  if (it == found.end()) {
    std::string name = layout.name;
    found.emplace(std::move(name), Found{std::move(layout), sm_arch});
  } else if (it->second.layout != layout && conflicts == ArchConflicts::kRefuse) {
    fail("kernel " + layout.name + " has different parameter layouts in sm_" +
         std::to_string(it->second.sm_arch) + " and sm_" + std::to_string(sm_arch));
  }
}

std::string_view ptx_text(const std::vector<std::byte>& bytes) {
  const auto* text = reinterpret_cast<const char*>(bytes.data());
  const void* nul = std::memchr(text, 0, bytes.size());  // the payload is NUL-padded
  return {text, nul ? static_cast<size_t>(static_cast<const char*>(nul) - text) : bytes.size()};
}

}  // namespace

std::vector<KernelLayout> kernel_layouts(std::span<const std::byte> fatbin,
                                         ArchConflicts conflicts) {
  auto entries = fatbin_entries(fatbin);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.sm_arch > b.sm_arch; });
  std::map<std::string, Found, std::less<>> found;
  for (const auto& entry : entries) {
    if (entry.kind != static_cast<uint16_t>(EntryKind::kElf)) continue;
    for (auto& layout : elf_kernel_layouts(entry_bytes(entry))) {
      merge_elf(found, std::move(layout), entry.sm_arch, conflicts);
    }
  }
  for (const auto& entry : entries) {
    if (entry.kind != static_cast<uint16_t>(EntryKind::kPtx)) continue;
    const auto bytes = entry_bytes(entry);
    for (auto& layout : ptx_kernel_layouts(ptx_text(bytes))) {
      if (found.contains(layout.name)) continue;  // native code's layout wins
      std::string name = layout.name;
      found.emplace(std::move(name), Found{std::move(layout), entry.sm_arch});
    }
  }
  std::vector<KernelLayout> out;
  out.reserve(found.size());
  for (auto& [name, f] : found) out.push_back(std::move(f.layout));
  return out;
}

std::vector<uint32_t> elf_archs(std::span<const std::byte> fatbin) {
  std::vector<uint32_t> archs;
  for (const auto& entry : fatbin_entries(fatbin)) {
    if (entry.kind == static_cast<uint16_t>(EntryKind::kElf)) archs.push_back(entry.sm_arch);
  }
  return archs;
}

}  // namespace gvirtus::fatbin

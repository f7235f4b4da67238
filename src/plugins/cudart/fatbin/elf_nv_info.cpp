#include "elf_nv_info.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "bounded.h"
#include "elf_sections.h"

namespace gvirtus::fatbin {
namespace {

// Attribute record formats: the first three carry a 16-bit value, SVAL a 16-bit length + bytes.
constexpr uint8_t kFmtNval = 1, kFmtBval = 2, kFmtHval = 3, kFmtSval = 4;
constexpr uint8_t kAttrParamCbank = 0x0a;      // SVAL: u32 section, u16 offset, u16 size
constexpr uint8_t kAttrKparamInfo = 0x17;      // SVAL: u32 index, u16 ordinal, u16 offset, u32
constexpr uint8_t kAttrCbankParamSize = 0x19;  // HVAL: parameter bytes
constexpr uint8_t kAttrKparamInfoV2 = 0x45;    // as KPARAM_INFO, size in the low 16 bits
constexpr std::string_view kInfoPrefix = ".nv.info.";
// Far above the 32 KiB parameter limit; bounds the ordinal table a hostile cubin can make us build.
constexpr uint32_t kMaxParams = 1 << 16;

KernelLayout parse_info(std::string name, std::span<const std::byte> info) {
  KernelLayout layout{std::move(name), {}, 0};
  std::vector<std::optional<ParamInfo>> by_ordinal;
  std::optional<uint32_t> param_bytes;
  for (uint64_t at = 0; at < info.size();) {
    const auto format = read_le<uint8_t>(info, at, "attribute");
    const auto attribute = read_le<uint8_t>(info, at + 1, "attribute");
    const auto value16 = read_le<uint16_t>(info, at + 2, "attribute");
    at += 4;
    if (format == kFmtHval && attribute == kAttrCbankParamSize) param_bytes = value16;
    if (format == kFmtNval || format == kFmtBval || format == kFmtHval) continue;
    if (format != kFmtSval) fail("unknown attribute format " + std::to_string(format));
    const auto value = slice(info, at, value16, "attribute value");
    at += value16;
    if (attribute == kAttrParamCbank && !param_bytes) {
      param_bytes = read_le<uint16_t>(value, 6, "EIATTR_PARAM_CBANK");
    }
    if (attribute != kAttrKparamInfo && attribute != kAttrKparamInfoV2) continue;
    const auto ordinal = read_le<uint16_t>(value, 4, "EIATTR_KPARAM_INFO");
    const auto offset = read_le<uint16_t>(value, 6, "EIATTR_KPARAM_INFO");
    const auto word = read_le<uint32_t>(value, 8, "EIATTR_KPARAM_INFO");
    const uint32_t size = attribute == kAttrKparamInfo ? word >> 18 : word & 0xffff;
    if (ordinal >= kMaxParams) fail("parameter ordinal " + std::to_string(ordinal));
    if (ordinal >= by_ordinal.size()) by_ordinal.resize(ordinal + 1);
    if (by_ordinal[ordinal]) fail("parameter " + std::to_string(ordinal) + " described twice");
    by_ordinal[ordinal] = ParamInfo{offset, size};
  }
  uint32_t end = 0;
  for (size_t i = 0; i < by_ordinal.size(); ++i) {
    if (!by_ordinal[i]) fail("parameter " + std::to_string(i) + " has no EIATTR_KPARAM_INFO");
    layout.params.push_back(*by_ordinal[i]);
    end = std::max(end, by_ordinal[i]->offset + by_ordinal[i]->size);
  }
  layout.param_bytes = param_bytes.value_or(end);
  if (end > layout.param_bytes) {
    fail("parameters end at " + std::to_string(end) + ", past the " +
         std::to_string(layout.param_bytes) + "-byte parameter buffer");
  }
  return layout;
}

}  // namespace

std::vector<KernelLayout> elf_kernel_layouts(std::span<const std::byte> elf) {
  const ElfSections all = elf_sections(elf);
  std::vector<KernelLayout> layouts;
  for (const auto& section : all.sections) {
    const auto name = elf_string(all.names, section.name, "ELF section name");
    if (!name.starts_with(kInfoPrefix) || name.size() == kInfoPrefix.size()) continue;
    try {
      layouts.push_back(parse_info(std::string(name.substr(kInfoPrefix.size())),
                                   slice(elf, section.offset, section.size, "section")));
    } catch (const Error& e) {
      raise(ErrorKind::kInvalidInput, std::string(e.what()) + " (in " + std::string(name) + ")");
    }
  }
  return layouts;
}

}  // namespace gvirtus::fatbin

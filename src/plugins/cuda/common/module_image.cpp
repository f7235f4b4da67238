// Module image sizes (module_image.h). The layouts read here: the fatbinary header (docs/fatbin.md)
// and the ELF64 header and section headers (elf(5)).
#include "plugins/cuda/common/module_image.h"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50;

struct FatbinHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t header_size;
  uint64_t files_size;
};

// Reads a T at `offset` if it lies in the first `readable` bytes.
template <typename T>
bool read_at(const unsigned char* image, size_t readable, uint64_t offset, T& value) {
  if (offset > readable || readable - offset < sizeof(T)) return false;
  std::memcpy(&value, image + offset, sizeof(T));
  return true;
}

size_t bounded(uint64_t bytes, size_t readable) {
  return bytes <= kMaxModuleImageBytes && bytes <= readable ? bytes : 0;
}

size_t elf_size(const unsigned char* image, size_t readable) {
  Elf64_Ehdr header;
  if (!read_at(image, readable, 0, header) || header.e_ident[EI_CLASS] != ELFCLASS64) return 0;
  if (header.e_shoff > kMaxModuleImageBytes || header.e_phoff > kMaxModuleImageBytes) return 0;
  uint64_t end = sizeof header;
  end = std::max<uint64_t>(end, header.e_shoff + uint64_t{header.e_shnum} * header.e_shentsize);
  end = std::max<uint64_t>(end, header.e_phoff + uint64_t{header.e_phnum} * header.e_phentsize);
  if (header.e_shnum != 0 && header.e_shentsize < sizeof(Elf64_Shdr)) return 0;
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    if (!read_at(image, readable, header.e_shoff + uint64_t{i} * header.e_shentsize, section)) {
      return 0;
    }
    if (section.sh_offset > kMaxModuleImageBytes || section.sh_size > kMaxModuleImageBytes) {
      return 0;
    }
    if (section.sh_type != SHT_NOBITS) end = std::max(end, section.sh_offset + section.sh_size);
  }
  return bounded(end, readable);
}

}  // namespace

ModuleImageKind module_image_kind(const void* image, size_t readable) {
  const auto* bytes = static_cast<const unsigned char*>(image);
  uint32_t magic = 0;
  if (read_at(bytes, readable, 0, magic) && magic == kFatbinMagic) return ModuleImageKind::kFatbin;
  if (readable >= SELFMAG && std::memcmp(bytes, ELFMAG, SELFMAG) == 0) {
    return ModuleImageKind::kCubin;
  }
  return ModuleImageKind::kPtx;  // shorter than a header, or text
}

size_t module_image_size(const void* image, size_t readable) {
  if (image == nullptr) return 0;
  const auto* bytes = static_cast<const unsigned char*>(image);
  switch (module_image_kind(image, readable)) {
    case ModuleImageKind::kFatbin: {
      FatbinHeader header;
      if (!read_at(bytes, readable, 0, header) || header.header_size < sizeof header) return 0;
      if (header.files_size > kMaxModuleImageBytes) return 0;
      return bounded(uint64_t{header.header_size} + header.files_size, readable);
    }
    case ModuleImageKind::kCubin:
      return elf_size(bytes, readable);
    case ModuleImageKind::kPtx:
      break;
  }
  const void* nul = std::memchr(bytes, 0, std::min<size_t>(readable, kMaxModuleImageBytes));
  return nul == nullptr ? 0 : static_cast<const unsigned char*>(nul) - bytes + 1;
}

}  // namespace gvirtus::cuda

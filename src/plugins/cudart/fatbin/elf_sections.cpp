// Section headers of a cubin (elf_sections.h).
#include "elf_sections.h"

#include <cstring>
#include <string>

#include "bounded.h"

namespace gvirtus::fatbin {

ElfSections elf_sections(std::span<const std::byte> elf) {
  const auto ident = slice(elf, 0, 16, "ELF identification");
  if (std::memcmp(ident.data(),
                  "\x7f"
                  "ELF",
                  4) != 0)
    fail("cubin entry is not an ELF");
  if (ident[4] != std::byte{2} || ident[5] != std::byte{1}) fail("cubin is not ELF64 LE");
  const auto table = read_le<uint64_t>(elf, 0x28, "ELF header");
  const auto header_bytes = read_le<uint16_t>(elf, 0x3a, "ELF header");
  const auto count = read_le<uint16_t>(elf, 0x3c, "ELF header");
  const auto names_index = read_le<uint16_t>(elf, 0x3e, "ELF header");
  if (header_bytes < 0x40) fail("ELF section header size " + std::to_string(header_bytes));
  slice(elf, table, uint64_t{header_bytes} * count, "ELF section headers");
  ElfSections out;
  for (uint64_t i = 0; i < count; ++i) {
    const auto h = elf.subspan(table + i * header_bytes, header_bytes);
    out.sections.push_back(
        {read_le<uint32_t>(h, 0, "section header"), read_le<uint32_t>(h, 4, "section header"),
         read_le<uint32_t>(h, 0x28, "section header"), read_le<uint64_t>(h, 0x18, "section header"),
         read_le<uint64_t>(h, 0x20, "section header")});
  }
  if (names_index >= out.sections.size()) fail("ELF section name table index out of range");
  const ElfSection& names = out.sections[names_index];
  out.names = slice(elf, names.offset, names.size, "ELF section name table");
  return out;
}

std::string_view elf_string(std::span<const std::byte> table, uint64_t offset, const char* what) {
  if (offset >= table.size()) fail(std::string(what) + " outside its string table");
  const auto* begin = reinterpret_cast<const char*>(table.data()) + offset;
  const void* nul = std::memchr(begin, 0, table.size() - offset);
  if (nul == nullptr) fail(std::string(what) + " without terminator");
  return {begin, static_cast<size_t>(static_cast<const char*>(nul) - begin)};
}

}  // namespace gvirtus::fatbin
